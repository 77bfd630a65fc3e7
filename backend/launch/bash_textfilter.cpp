// sed's `s` command and tr, as the launch-script reader runs them on known text
// (bash_textfilter.h).

#include "backend/launch/bash_textfilter.h"

#include <cstddef>

#include "backend/launch/bash_expand.h"
#include "backend/launch/bash_limits.h"

namespace runplane::plan::launch::detail {

namespace {

constexpr std::size_t kMaxSedCommands = 64;

struct Atom {
    bool any = false;  // '.'
    char c = 0;
};

struct Substitution {
    std::vector<Atom> pattern;
    bool anchorStart = false;
    bool anchorEnd = false;
    // the replacement: literal pieces, with `whole` marking where the match goes
    std::vector<std::pair<bool, std::string>> replacement;  // (whole match?, text)
    bool global = false;
};

// One `s` command at text[pos]; advances pos past it. nullopt (with why) when not one we read.
std::optional<Substitution> parseSubstitution(const std::string& text, std::size_t& pos,
                                              std::string& why) {
    Substitution s;
    if (pos >= text.size() || text[pos] != 's' || pos + 1 >= text.size()) {
        why = "only s/PATTERN/REPLACEMENT/ commands are read";
        return std::nullopt;
    }
    const char delim = text[pos + 1];
    if (delim == '\\' || delim == '\n' || delim == ' ') {
        why = "an s command's delimiter must be a plain character";
        return std::nullopt;
    }
    pos += 2;
    // pattern
    bool first = true;
    for (;;) {
        if (pos >= text.size()) {
            why = "an s command is not closed";
            return std::nullopt;
        }
        const char c = text[pos];
        if (c == delim) {
            ++pos;
            break;
        }
        if (c == '\\') {
            if (pos + 1 >= text.size()) {
                why = "a pattern ends in a backslash";
                return std::nullopt;
            }
            const char e = text[pos + 1];
            // \( \{ \+ \? \| \n \1 ...: regular-expression forms, not read
            if (e != delim && e != '.' && e != '\\' && e != '/' && e != '*' && e != '[' &&
                e != ']' && e != '^' && e != '$' && e != '-' && e != '_') {
                why = std::string("the pattern escape \\") + e + " is not read";
                return std::nullopt;
            }
            s.pattern.push_back({false, e});
            pos += 2;
            first = false;
            continue;
        }
        if (c == '^' && first) {
            s.anchorStart = true;
        } else if (c == '$' && pos + 1 < text.size() && text[pos + 1] == delim) {
            s.anchorEnd = true;
        } else if (c == '.') {
            s.pattern.push_back({true, 0});
        } else if (c == '*' || c == '[' || c == ']') {
            why = std::string("the pattern character '") + c + "' is not read";
            return std::nullopt;
        } else {
            s.pattern.push_back({false, c});
        }
        first = false;
        ++pos;
    }
    if (s.pattern.empty()) {
        why = "an empty pattern (sed's last regular expression) is not read";
        return std::nullopt;
    }
    // replacement
    std::string piece;
    for (;;) {
        if (pos >= text.size()) {
            why = "an s command is not closed";
            return std::nullopt;
        }
        const char c = text[pos];
        if (c == delim) {
            ++pos;
            break;
        }
        if (c == '\\') {
            if (pos + 1 >= text.size()) {
                why = "a replacement ends in a backslash";
                return std::nullopt;
            }
            const char e = text[pos + 1];
            if (e != delim && e != '&' && e != '\\') {
                why = std::string("the replacement escape \\") + e + " is not read";
                return std::nullopt;
            }
            piece += e;
            pos += 2;
            continue;
        }
        if (c == '&') {
            s.replacement.emplace_back(false, piece);
            s.replacement.emplace_back(true, "");
            piece.clear();
        } else if (c == '\n') {
            why = "a replacement spans lines";
            return std::nullopt;
        } else {
            piece += c;
        }
        ++pos;
    }
    s.replacement.emplace_back(false, piece);
    // flags, then ';' / newline / end
    while (pos < text.size() && text[pos] != ';' && text[pos] != '\n' && text[pos] != '}') {
        const char f = text[pos];
        if (f == 'g') {
            s.global = true;
        } else if (f != ' ' && f != '\t') {
            why = std::string("the s flag '") + f + "' is not read";
            return std::nullopt;
        }
        ++pos;
    }
    if (pos < text.size() && text[pos] == '}') {
        why = "sed blocks are not read";
        return std::nullopt;
    }
    return s;
}

bool matchesAt(const Substitution& s, const std::string& line, std::size_t at) {
    if (at + s.pattern.size() > line.size()) {
        return false;
    }
    for (std::size_t i = 0; i < s.pattern.size(); ++i) {
        if (!s.pattern[i].any && s.pattern[i].c != line[at + i]) {
            return false;
        }
    }
    return !s.anchorEnd || at + s.pattern.size() == line.size();
}

bool applyToLine(const Substitution& s, std::string& line) {
    std::string out;
    std::size_t at = 0;
    bool done = false;
    while (at < line.size()) {
        const bool allowed = !done && (!s.anchorStart || at == 0);
        if (allowed && matchesAt(s, line, at)) {
            const std::string match = line.substr(at, s.pattern.size());
            for (const auto& [whole, text] : s.replacement) {
                out += whole ? match : text;
            }
            at += s.pattern.size();
            done = !s.global;
            if (out.size() > kMaxValueBytes) {
                return false;
            }
            continue;
        }
        out += line[at];
        ++at;
    }
    line = std::move(out);
    return true;
}

// A tr set expanded to its characters; nullopt when a form is not read.
std::optional<std::string> expandSet(const std::string& set, std::string& why) {
    std::string out;
    for (std::size_t i = 0; i < set.size();) {
        if (set.compare(i, 9, "[:upper:]") == 0) {
            for (char c = 'A'; c <= 'Z'; ++c) {
                out += c;
            }
            i += 9;
        } else if (set.compare(i, 9, "[:lower:]") == 0) {
            for (char c = 'a'; c <= 'z'; ++c) {
                out += c;
            }
            i += 9;
        } else if (set.compare(i, 9, "[:digit:]") == 0) {
            for (char c = '0'; c <= '9'; ++c) {
                out += c;
            }
            i += 9;
        } else if (set[i] == '[' || set[i] == '\\') {
            why = "the tr set form '" + set.substr(i) + "' is not read";
            return std::nullopt;
        } else if (i + 2 < set.size() && set[i + 1] == '-') {
            const unsigned char lo = static_cast<unsigned char>(set[i]);
            const unsigned char hi = static_cast<unsigned char>(set[i + 2]);
            if (hi < lo) {
                why = "the tr range '" + set.substr(i, 3) + "' is reversed";
                return std::nullopt;
            }
            for (unsigned c = lo; c <= hi; ++c) {
                out += static_cast<char>(c);
            }
            i += 3;
        } else {
            out += set[i];
            ++i;
        }
    }
    return out;
}

}  // namespace

std::optional<std::string> runSed(const std::vector<std::string>& args, const std::string& input,
                                  std::string& why) {
    std::vector<std::string> scripts;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-e" && i + 1 < args.size()) {
            scripts.push_back(args[++i]);
        } else if (args[i].rfind("-", 0) == 0 || !scripts.empty()) {
            why = "sed with '" + args[i] + "' is not read (only sed SCRIPT / sed -e SCRIPT...)";
            return std::nullopt;
        } else {
            scripts.push_back(args[i]);
            if (i + 1 != args.size()) {
                why = "sed with a file operand is not read";
                return std::nullopt;
            }
        }
    }
    if (scripts.empty()) {
        why = "sed without a script";
        return std::nullopt;
    }
    std::vector<Substitution> commands;
    for (const auto& script : scripts) {
        std::size_t pos = 0;
        for (;;) {
            while (pos < script.size() && (script[pos] == ' ' || script[pos] == '\t' ||
                                           script[pos] == ';' || script[pos] == '\n')) {
                ++pos;
            }
            if (pos >= script.size()) {
                break;
            }
            auto s = parseSubstitution(script, pos, why);
            if (!s) {
                return std::nullopt;
            }
            commands.push_back(std::move(*s));
            if (commands.size() > kMaxSedCommands) {
                why = "more than " + std::to_string(kMaxSedCommands) + " sed commands";
                return std::nullopt;
            }
        }
    }
    std::string out;
    std::size_t start = 0;
    while (start < input.size()) {
        const std::size_t nl = input.find('\n', start);
        std::string line =
            input.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        for (const auto& s : commands) {
            if (!applyToLine(s, line)) {
                why = "sed's output would be larger than the reader's limit";
                return std::nullopt;
            }
        }
        out += line;
        if (nl != std::string::npos) {
            out += '\n';
        }
        if (out.size() > kMaxValueBytes) {
            why = "sed's output would be larger than the reader's limit";
            return std::nullopt;
        }
        start = nl == std::string::npos ? input.size() : nl + 1;
    }
    return out;
}

std::optional<std::string> runTr(const std::vector<std::string>& args, const std::string& input,
                                 std::string& why) {
    const bool del = args.size() == 2 && args[0] == "-d";
    if (!del && (args.size() != 2 || args[0].rfind("-", 0) == 0)) {
        why = "only tr SET1 SET2 and tr -d SET are read";
        return std::nullopt;
    }
    auto set1 = expandSet(del ? args[1] : args[0], why);
    if (!set1) {
        return std::nullopt;
    }
    std::string map[256];
    bool mapped[256] = {};
    if (del) {
        for (char c : *set1) {
            mapped[static_cast<unsigned char>(c)] = true;  // to nothing
        }
    } else {
        auto set2 = expandSet(args[1], why);
        if (!set2) {
            return std::nullopt;
        }
        if (set2->empty()) {
            why = "tr with an empty second set";
            return std::nullopt;
        }
        for (std::size_t i = 0; i < set1->size(); ++i) {
            const unsigned char from = static_cast<unsigned char>((*set1)[i]);
            mapped[from] = true;  // a repeated character: the last mapping counts (GNU tr)
            map[from] = std::string(1, i < set2->size() ? (*set2)[i] : set2->back());
        }
    }
    std::string out;
    out.reserve(input.size());
    for (char c : input) {
        const unsigned char u = static_cast<unsigned char>(c);
        out += mapped[u] ? map[u] : std::string(1, c);
    }
    return out;
}

std::optional<Value> Expander::evalTextPipeline(const Node& node, const std::string& text,
                                                int line) {
    for (const auto& op : node.ops) {
        if (op != "|") {
            return std::nullopt;
        }
    }
    for (std::size_t i = 0; i < node.commands.size(); ++i) {
        const SimpleCommand& cmd = node.commands[i];
        if (!cmd.assigns.empty() || !cmd.redirects.empty() || cmd.words.empty() ||
            cmd.unsupported || !cmd.heredocs.empty()) {
            return std::nullopt;
        }
        const std::string name = cmd.words[0].literal();
        if (i == 0 ? name != "echo" : (name != "sed" && name != "tr")) {
            return std::nullopt;
        }
    }
    // every word after the command's name, expanded; an unknown or symbolic one ends the reading
    std::string unknownWhy;
    auto argsOf = [&](const SimpleCommand& cmd, std::vector<std::string>& out) {
        for (std::size_t k = 1; k < cmd.words.size(); ++k) {
            Word w = cmd.words[k];
            w.line = line;
            w.column = 0;
            for (const Field& f : expandWord(w, true)) {
                if (!f.known || f.symbolic) {
                    unknownWhy = f.known ? "line " + std::to_string(line) + ": $(" + text +
                                               ") reads a parameter not set here"
                                         : f.why;
                    return false;
                }
                out.push_back(f.text);
            }
        }
        return true;
    };
    std::vector<std::string> echoArgs;
    if (!argsOf(node.commands[0], echoArgs)) {
        return unknownValue(line, unknownWhy);
    }
    bool newline = true;
    if (!echoArgs.empty() && echoArgs[0] == "-n") {
        newline = false;
        echoArgs.erase(echoArgs.begin());
    }
    if (!echoArgs.empty() && echoArgs[0].size() > 1 && echoArgs[0][0] == '-' &&
        echoArgs[0].find_first_not_of("neE", 1) == std::string::npos) {
        return std::nullopt;  // echo -e / -E: escapes, not read here
    }
    std::string out;
    for (std::size_t k = 0; k < echoArgs.size(); ++k) {
        out += (k ? " " : "") + echoArgs[k];
    }
    if (newline) {
        out += '\n';
    }
    for (std::size_t i = 1; i < node.commands.size(); ++i) {
        const SimpleCommand& cmd = node.commands[i];
        std::vector<std::string> args;
        if (!argsOf(cmd, args)) {
            return unknownValue(line, unknownWhy);
        }
        std::string why;
        const bool sed = cmd.words[0].literal() == "sed";
        std::optional<std::string> next = sed ? runSed(args, out, why) : runTr(args, out, why);
        if (!next) {
            note(NoteLevel::Warning, line,
                 "not understood: command substitution $(" + text + "): " + why);
            return unknownValue(
                line, "line " + std::to_string(line) + ": $(" + text + ") not understood");
        }
        out = std::move(*next);
        if (!charge(out.size(), line)) {
            return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
        }
    }
    while (!out.empty() && out.back() == '\n') {
        out.pop_back();  // $(...) drops the trailing newlines
    }
    Value v;
    v.file = m_file;
    v.line = line;
    v.text = std::move(out);
    return v;
}

}  // namespace runplane::plan::launch::detail
