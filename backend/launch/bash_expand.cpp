// Word expansion for the launch-script reader: ${...} forms, quoting and field splitting as bash
// does them, with the size, nesting and work limits of bash_limits.h. $(...) and $((...)) are in
// bash_subst.cpp.

#include <cctype>

#include "backend/launch/bash_expand.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

// Builds the fields of one word.
class FieldBuilder {
  public:
    // allowance: the expansion work this word may still cost (text, kWordCost per field and each
    // field's copy of the word as written, wordRawSize). Building stops once it is spent, so a
    // word that splits into millions of fields never holds them all before it is charged
    // ($X$X$X... of a 1 MiB blank-separated value: 1.4 GB before; found by fuzz_import).
    FieldBuilder(std::string file, int line, std::uint64_t allowance, std::size_t wordRawSize)
        : m_file(std::move(file)),
          m_line(line),
          m_allowance(allowance),
          m_wordRawSize(wordRawSize) {
        reset();
    }

    void append(const Value& v, bool fromElement) {
        if (m_overBudget) {
            return;
        }
        if (m_cur.text.size() + v.text.size() > kMaxValueBytes) {
            m_overflow = true;  // the caller reports it; the value is not built
            return;
        }
        m_bytes += v.text.size();
        m_cur.text += v.text;
        m_cur.symbolic = m_cur.symbolic || v.symbolic;
        if (!v.known && m_cur.known) {
            m_cur.known = false;
            m_cur.why = v.why;
        }
        if (fromElement && !m_hasElementProv && v.line > 0) {
            m_cur.file = v.file;
            m_cur.line = v.line;
            m_cur.raw = v.raw;
            m_hasElementProv = true;
        }
        m_active = m_active || !v.text.empty() || !v.known;
    }
    void force() { m_active = true; }
    void finish() {
        if (m_active && !m_overBudget) {
            m_fieldCost += kWordCost + (m_cur.raw.empty() ? m_wordRawSize : m_cur.raw.size());
            if (m_bytes + m_fieldCost > m_allowance) {
                m_overBudget = true;
                m_fields.clear();
            } else {
                m_fields.push_back(std::move(m_cur));
            }
        }
        reset();
    }
    // Unquoted expansion result: split on blanks.
    void appendSplit(const Value& v, bool fromElement) {
        if (!v.known) {
            append(v, fromElement);
            return;
        }
        const std::string& s = v.text;
        // Each field gets v's provenance and a slice of its text; copying v whole per field was
        // quadratic ($(seq 1 99999) unquoted: 100k fields x 600 KB; found by fuzz_import).
        Value shell = v;
        shell.text.clear();
        std::size_t i = 0;
        if (!s.empty() && isBlank(s[0])) {
            finish();
        }
        bool first = true;
        while (i < s.size() && !m_overBudget) {
            while (i < s.size() && isBlank(s[i])) {
                ++i;
            }
            if (i >= s.size()) {
                break;
            }
            std::size_t j = i;
            while (j < s.size() && !isBlank(s[j])) {
                ++j;
            }
            if (!first) {
                finish();
            }
            Value piece = shell;
            piece.text.assign(s, i, j - i);
            append(piece, fromElement);
            first = false;
            i = j;
        }
        if (!s.empty() && isBlank(s.back())) {
            finish();
        }
    }
    Field& current() { return m_cur; }
    bool overflowed() const { return m_overflow; }
    /// The word would cost more than its allowance: no fields were kept.
    bool overBudget() const { return m_overBudget; }
    std::uint64_t bytes() const { return m_bytes; }
    std::vector<Field> take() {
        finish();
        return std::move(m_fields);
    }

  private:
    std::string m_file;
    int m_line;
    Field m_cur;
    bool m_active = false;
    bool m_hasElementProv = false;
    bool m_overflow = false;
    std::uint64_t m_allowance;
    std::size_t m_wordRawSize;
    bool m_overBudget = false;
    std::uint64_t m_fieldCost = 0;  // kWordCost + the raw copy, per field kept
    std::uint64_t m_bytes = 0;
    std::vector<Field> m_fields;

    void reset() {
        m_cur = Field{};
        m_cur.file = m_file;
        m_cur.line = m_line;
        m_active = false;
        m_hasElementProv = false;
    }
};

}  // namespace

bool isSelfParameter(const Word& word, const std::string& name) {
    if (word.parts.size() != 1 || word.parts[0].kind != WordPart::Kind::Param) {
        return false;
    }
    const std::string& t = word.parts[0].text;
    return t.compare(0, name.size(), name) == 0 &&
           (t.size() == name.size() || !isNameChar(t[name.size()]));
}

Expander::ParamResult Expander::evalParam(const std::string& expr, bool quoted, int line) {
    ParamResult res;
    res.scalar.file = m_file;
    res.scalar.line = line;
    if (expr.empty()) {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": empty ${}");
        return res;
    }
    // ${#NAME} / ${#NAME[@]}
    if (expr.size() > 1 && expr[0] == '#') {
        std::string name = expr.substr(1);
        const bool all = name.size() > 3 && (name.ends_with("[@]") || name.ends_with("[*]"));
        if (all) {
            name.resize(name.size() - 3);
        }
        auto it = m_vars.find(name);
        if (it != m_vars.end() && it->second.unknown) {
            res.scalar = unknownValue(line, it->second.why);
        } else if (it == m_vars.end()) {
            res.scalar.text = "0";
        } else if (all) {
            res.scalar.text = std::to_string(it->second.values.size());
        } else {
            res.scalar.text = std::to_string(
                it->second.values.empty() ? 0 : it->second.values.front().text.size());
        }
        return res;
    }
    // the parameter's name
    std::size_t i = 0;
    std::string name;
    if (isNameStart(expr[0])) {
        while (i < expr.size() && isNameChar(expr[i])) {
            ++i;
        }
        name = expr.substr(0, i);
    } else if (std::isdigit(static_cast<unsigned char>(expr[0]))) {
        while (i < expr.size() && std::isdigit(static_cast<unsigned char>(expr[i]))) {
            ++i;
        }
        name = expr.substr(0, i);
    } else {
        name = expr.substr(0, 1);
        i = 1;
    }
    std::string rest = expr.substr(i);
    std::string subscript;
    if (!rest.empty() && rest[0] == '[') {
        const auto close = rest.find(']');
        if (close == std::string::npos) {
            res.scalar =
                unknownValue(line, "line " + std::to_string(line) + ": bad ${" + expr + "}");
            return res;
        }
        subscript = rest.substr(1, close - 1);
        rest = rest.substr(close + 1);
    }
    // special parameters
    if (name == "0" || (name == "BASH_SOURCE" && (subscript.empty() || subscript == "0"))) {
        Value v;
        v.text = name == "0" ? m_mainPath : m_file;
        v.file = m_file;
        v.line = line;
        m_vars[name == "0" ? "0" : "BASH_SOURCE"] = Var{{v}, false, false, false, "", false};
    } else if (name == "@" || name == "*") {
        res.list = true;
        res.star = name == "*" && quoted;
        if (m_args && rest.empty()) {  // a function's arguments
            res.items = *m_args;
        }
        return res;  // the script is read as if run without arguments
    } else if (name == "#" || name == "?") {
        res.scalar.text = name == "#" && m_args ? std::to_string(m_args->size()) : "0";
        m_argCountRead = m_argCountRead || (name == "#" && !m_args);
        return res;
    } else if (name == "$" || name == "!" || name == "-") {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": $" + name +
                                            " is only known when the script runs");
        return res;
    } else if (std::isdigit(static_cast<unsigned char>(name[0])) && m_args) {
        // inside a function: its own arguments
        const auto n = parseInt(name);
        if (n && *n >= 1 && static_cast<std::size_t>(*n) <= m_args->size() && rest.empty()) {
            res.scalar = (*m_args)[static_cast<std::size_t>(*n - 1)];
            res.scalar.line = line;
            return res;
        }
        if (rest.empty()) {
            return res;  // not passed: empty
        }
    } else if (std::isdigit(static_cast<unsigned char>(name[0])) &&
               !m_reportedUnset.count("$" + name) && !m_vars.count(name)) {
        m_reportedUnset.insert("$" + name);
        note(NoteLevel::Info, line,
             "$" + name +
                 " (a script argument) is not given: the script is read as if run without "
                 "arguments, $" +
                 name + " is the parameter ${" + name + "} (give it with --env " + name + "=...)");
    }
    const auto it = m_vars.find(name);
    const bool exists = it != m_vars.end();
    if (!subscript.empty() && subscript != "@" && subscript != "*") {
        auto idx = parseInt(subscript);
        if (!idx || *idx < 0) {
            res.scalar = unknownValue(line, "line " + std::to_string(line) + ": subscript '" +
                                                subscript + "' is not understood");
            return res;
        }
        if (exists && it->second.unknown) {
            res.scalar = unknownValue(line, it->second.why);
        } else if (exists && static_cast<std::size_t>(*idx) < it->second.values.size()) {
            res.scalar = it->second.values[static_cast<std::size_t>(*idx)];
        }
        if (!rest.empty()) {
            res.scalar = unknownValue(
                line, "line " + std::to_string(line) + ": ${" + expr + "} is not understood");
        }
        return res;
    }
    if (subscript == "@" || subscript == "*") {
        // ${A[@]+"${A[@]}"}: the set -u safe splice of A, i.e. A's items (nothing when unset)
        if (rest == "+\"${" + name + "[@]}\"" || rest == "+${" + name + "[@]}") {
            res.quotedItems = rest[1] == '"';
            rest.clear();
            subscript = "@";
        }
        if (!rest.empty()) {
            res.scalar = unknownValue(
                line, "line " + std::to_string(line) + ": ${" + expr + "} is not understood");
            return res;
        }
        res.list = true;
        res.star = subscript == "*" && quoted;
        if (exists && it->second.unknown) {
            res.items.push_back(unknownValue(line, it->second.why));
        } else if (exists) {
            res.items = it->second.values;
        } else if (!m_reportedUnset.count(name)) {
            m_reportedUnset.insert(name);
            note(NoteLevel::Info, line, "array " + name + " is not set; it expands to nothing");
        }
        return res;
    }
    bool isSet = false;
    std::optional<Value> current;
    if (std::isdigit(static_cast<unsigned char>(name[0])) && m_args) {
        const auto n = parseInt(name);
        isSet = n && *n >= 1 && static_cast<std::size_t>(*n) <= m_args->size();
        if (isSet) {
            current = (*m_args)[static_cast<std::size_t>(*n - 1)];
        }
    } else {
        current = lookup(name, line, &isSet);
    }
    const bool nonEmpty = isSet && current && (!current->known || !current->text.empty());
    if (rest.empty()) {
        if (current) {
            res.scalar = *current;
            res.scalar.line = line;
            res.scalar.file = m_file;
        } else if (!std::isdigit(static_cast<unsigned char>(name[0])) || !m_args) {
            res.scalar = parameterValue(name, line, false);
        }
        return res;
    }
    std::string op;
    std::size_t opLen = 0;
    if (rest.size() >= 2 && rest[0] == ':' &&
        std::string_view("-=?+").find(rest[1]) != std::string_view::npos) {
        op = rest.substr(0, 2);
        opLen = 2;
    } else if (std::string_view("-=?+").find(rest[0]) != std::string_view::npos) {
        op = rest.substr(0, 1);
        opLen = 1;
    } else {
        res.scalar = unknownValue(line, "line " + std::to_string(line) + ": ${" + expr +
                                            "} is not understood (only :- - := = :? ? :+ + forms)");
        note(NoteLevel::Warning, line, "not understood: ${" + expr + "}");
        return res;
    }
    const bool colon = op.size() == 2;
    const bool unsetLike = colon ? !nonEmpty : !isSet;
    const std::string operand = rest.substr(opLen);
    auto operandValue = [&]() {
        if (!charge(operand.size(), line)) {
            return unknownValue(line, "line " + std::to_string(line) + ": not read (limit)");
        }
        return scalarOf(parseWordText(operand, quoted, line));
    };
    switch (op.back()) {
        case '-':
            if (unsetLike && !isSet && operand.empty() &&
                (!std::isdigit(static_cast<unsigned char>(name[0])) || !m_args)) {
                // `${X:-}` (an empty default, the `set -u` safe read) of a variable neither set
                // nor given: the parameter ${X}, as `${X}` would be, so that a guard
                // `if [ -z "${X:-}" ]; then ...; exit 1; fi` reads it as passed
                res.scalar = parameterValue(name, line, false);
            } else {
                res.scalar = unsetLike ? operandValue() : *current;
            }
            break;
        case '=':
            if (unsetLike) {
                res.scalar = operandValue();
                m_vars[name].values = {res.scalar};
                m_vars[name].isArray = false;
            } else {
                res.scalar = *current;
            }
            break;
        case '?':
            if (unsetLike && !isSet) {
                res.scalar = parameterValue(name, line, true);
                note(NoteLevel::Info, line,
                     name + " is required by the script (" +
                         (operand.empty() ? std::string("parameter null or not set") : operand) +
                         "); give it with --env " + name + "=... or when the export runs");
            } else if (unsetLike) {
                const std::string msg = operand.empty() ? "parameter null or not set" : operand;
                res.scalar = unknownValue(line, "line " + std::to_string(line) + ": " + name +
                                                    " must be set (" + msg + ")");
                note(
                    NoteLevel::Warning, line,
                    name + " must not be empty (" + msg + "); give it with --env " + name + "=...");
            } else {
                res.scalar = *current;
            }
            break;
        case '+':
            res.scalar = unsetLike ? Value{} : operandValue();
            break;
        default:
            break;
    }
    res.scalar.file = m_file;
    res.scalar.line = line;
    return res;
}

std::vector<Field> Expander::expandWord(const Word& word, bool split) {
    // an unknown field standing for the word as written (after a limit hit)
    auto asWritten = [&](const std::string& why) {
        Field f;
        f.text = word.raw;
        f.known = false;
        f.why = "line " + std::to_string(word.line) + ": " + why;
        f.file = m_file;
        f.line = word.line;
        return std::vector<Field>{f};
    };
    if (m_budgetHit) {
        return asWritten("not read (the expansion limit was hit)");
    }
    struct Nest {
        int& depth;
        explicit Nest(int& d) : depth(d) { ++depth; }
        ~Nest() { --depth; }
    } nest(m_exprNest);
    if (m_exprNest == 1 && word.column > 0) {
        m_column = word.column;  // limit notes inside this word point here
    }
    if (m_exprNest > kMaxNesting) {
        limitHit(word.line, "expansions (${...}, $(...), $((...))) nested more than " +
                                std::to_string(kMaxNesting) + " levels deep; the value is unknown");
        return asWritten("expansions nested too deeply");
    }
    FieldBuilder b(m_file, word.line, workLeft(), word.raw.size());
    for (const auto& part : word.parts) {
        switch (part.kind) {
            case WordPart::Kind::Literal: {
                Value v;
                v.text = part.text;
                b.append(v, false);
                if (part.quoted) {
                    b.force();
                }
                break;
            }
            case WordPart::Kind::Param: {
                ParamResult r = evalParam(part.text, part.quoted, word.line);
                if (!r.list) {
                    if (part.quoted || !split) {
                        b.append(r.scalar, false);
                        if (part.quoted) {
                            b.force();
                        }
                    } else {
                        b.appendSplit(r.scalar, false);
                    }
                    break;
                }
                if (r.star || !split) {
                    Value joined;
                    joined.file = m_file;
                    joined.line = word.line;
                    for (std::size_t i = 0; i < r.items.size(); ++i) {
                        if (joined.text.size() + r.items[i].text.size() + 1 > kMaxValueBytes) {
                            limitHit(word.line, "${...[*]} joins to more than " +
                                                    std::to_string(kMaxValueBytes >> 20) +
                                                    " MiB; the value is unknown");
                            return asWritten("the value is longer than the reader's limit");
                        }
                        joined.text += (i ? " " : "") + r.items[i].text;
                        if (!r.items[i].known && joined.known) {
                            joined.known = false;
                            joined.why = r.items[i].why;
                        }
                    }
                    if (part.quoted || !split) {
                        b.append(joined, false);
                        if (part.quoted) {
                            b.force();
                        }
                        if (word.parts.size() == 1 &&
                            charge(kWordCost * r.items.size(), word.line)) {
                            b.current().segments = r.items;
                        }
                    } else {
                        b.appendSplit(joined, false);
                    }
                    break;
                }
                for (std::size_t i = 0; i < r.items.size(); ++i) {
                    if (i > 0) {
                        b.finish();
                    }
                    if (part.quoted || r.quotedItems) {
                        b.append(r.items[i], true);
                        b.force();
                    } else {
                        b.appendSplit(r.items[i], true);
                    }
                }
                break;
            }
            case WordPart::Kind::CommandSubst:
            case WordPart::Kind::Arith: {
                Value v = part.kind == WordPart::Kind::Arith
                              ? evalArith(part.text, word.line)
                              : evalCommandSubst(part.text, word.line);
                if (part.kind == WordPart::Kind::CommandSubst) {
                    while (!v.text.empty() && v.text.back() == '\n') {
                        v.text.pop_back();
                    }
                }
                if (part.quoted || !split) {
                    b.append(v, false);
                    if (part.quoted) {
                        b.force();
                    }
                } else {
                    b.appendSplit(v, false);
                }
                break;
            }
            case WordPart::Kind::Unsupported: {
                note(NoteLevel::Warning, word.line, "not understood: " + part.text);
                Value v = unknownValue(word.line, "line " + std::to_string(word.line) + ": " +
                                                      part.text + " not understood");
                v.text = part.text;
                b.append(v, false);
                break;
            }
        }
    }
    std::vector<Field> fields = b.take();
    if (b.overBudget()) {
        charge(workLeft() + 1, word.line);  // spends the budget: the limit's finding, reading stops
        return asWritten("not read (the expansion limit was hit)");
    }
    if (b.overflowed()) {
        limitHit(word.line, "the word " + word.raw.substr(0, 60) +
                                (word.raw.size() > 60 ? "..." : "") + " expands to more than " +
                                std::to_string(kMaxValueBytes >> 20) +
                                " MiB; the value is unknown");
        return asWritten("the value is longer than the reader's limit");
    }
    // Each field keeps a copy of the word as written (or of its array element): 100k fields
    // of one long word ($(seq 1 99999) unquoted) were gigabytes that the budget never saw
    // (fuzz_import, out of memory).
    std::uint64_t rawCopies = 0;
    for (const auto& f : fields) {
        rawCopies += f.raw.empty() ? word.raw.size() : f.raw.size();
    }
    if (!charge(b.bytes() + rawCopies + kWordCost * (fields.size() + word.parts.size()),
                word.line)) {
        return asWritten("not read (the expansion limit was hit)");
    }
    for (auto& f : fields) {
        if (!f.known && f.text.empty()) {
            f.text = word.raw;
        }
        if (f.raw.empty()) {
            f.raw = word.raw;
        }
    }
    return fields;
}

Value Expander::scalarOf(const Word& word) {
    Value out;
    out.file = m_file;
    out.line = word.line;
    const std::vector<Field> fields = expandWord(word, false);
    for (std::size_t i = 0; i < fields.size(); ++i) {
        out.text += (i ? " " : "") + fields[i].text;
        out.symbolic = out.symbolic || fields[i].symbolic;
        if (!fields[i].known && out.known) {
            out.known = false;
            out.why = fields[i].why;
        }
    }
    return out;
}

}  // namespace runplane::plan::launch::detail
