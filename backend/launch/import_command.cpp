// The launch command of a script as flags: words grouped into flags with their values, an
// unresolved word a splice of its own (docs/launch-scripts.md, "Splices"), the miles launcher's
// --extra-args string split into train.py flags, `ray job submit` unwrapped to its entry point.

#include "backend/launch/import_parts.h"
#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {

std::string baseName(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// NAME of a splice word ("${NAME[@]}", $NAME, ...); "" for anything else.
std::string spliceName(const std::string& word) {
    if (!isSpliceWord(word)) {
        return "";
    }
    std::string name;
    for (char c : word) {
        if (c == '[') {
            break;
        }
        if (isNameChar(c)) {
            name += c;
        }
    }
    return name;
}

namespace {

struct RawFlag {
    std::string flag;
    std::vector<Field> values;
    Field token;
};

bool looksLikeFlag(const Field& f) {
    const std::string& t = f.text;
    return f.known && t.size() > 2 && t[0] == '-' && t[1] == '-' &&
           std::isalnum(static_cast<unsigned char>(t[2])) &&
           t.find_first_of(" \t\n") == std::string::npos;
}

// An unresolved word: a splice of its own (docs/launch-scripts.md, "Splices").
bool isSplice(const Field& f) {
    return !f.known;
}

std::vector<RawFlag> groupFlags(const std::vector<Field>& tokens) {
    std::vector<RawFlag> out;
    bool wantExtraValue = false;
    bool afterSplice = false;  // words after a splice are its own until the next flag
    for (const auto& f : tokens) {
        if (isSplice(f) && !wantExtraValue) {
            RawFlag splice;
            splice.token = f;
            splice.values.push_back(f);
            out.push_back(std::move(splice));
            afterSplice = true;
            continue;
        }
        if (afterSplice && !looksLikeFlag(f)) {
            RawFlag positional;
            positional.token = f;
            positional.values.push_back(f);
            out.push_back(std::move(positional));
            continue;
        }
        afterSplice = false;
        if (wantExtraValue) {
            out.back().values.push_back(f);
            wantExtraValue = false;
            continue;
        }
        if (looksLikeFlag(f)) {
            RawFlag rf;
            rf.token = f;
            const auto eq = f.text.find('=');
            rf.flag = f.text.substr(0, eq);
            if (eq != std::string::npos) {
                Field v = f;
                v.text = f.text.substr(eq + 1);
                v.segments.clear();
                rf.values.push_back(v);
            }
            wantExtraValue = rf.flag == "--extra-args" && rf.values.empty();
            out.push_back(std::move(rf));
            continue;
        }
        if (out.empty()) {
            RawFlag positional;
            positional.token = f;
            positional.values.push_back(f);
            out.push_back(std::move(positional));
            continue;
        }
        out.back().values.push_back(f);
    }
    return out;
}

ScriptFlag toScriptFlag(const RawFlag& rf, const ScriptReading& reading, bool inExtra) {
    ScriptFlag sf;
    sf.flag = rf.flag;
    sf.file = rf.token.file;
    sf.line = rf.token.line;
    sf.fromModelFile = reading.modelFiles.count(rf.token.file) > 0;
    sf.inExtraArgs = inExtra;
    sf.known = rf.token.known;
    sf.splice = rf.flag.empty() && isSplice(rf.token);
    if (sf.splice) {
        sf.values = {rf.token.raw.empty() ? rf.token.text : rf.token.raw};
        return sf;
    }
    for (const auto& v : rf.values) {
        sf.values.push_back(v.text);
        sf.known = sf.known && v.known;
    }
    return sf;
}

// Splits the miles launcher's --extra-args string into train.py flags, element by element.
void expandExtraArgs(const RawFlag& rf, const ScriptReading& reading, std::vector<ScriptFlag>& out,
                     std::vector<LaunchNote>& notes) {
    if (rf.values.size() != 1) {
        out.push_back(toScriptFlag(rf, reading, false));
        return;
    }
    const Field& value = rf.values[0];
    std::vector<Value> segments = value.segments;
    if (segments.empty()) {
        Value whole;
        whole.text = value.text;
        whole.known = value.known;
        whole.why = value.why;
        whole.file = value.file;
        whole.line = value.line;
        segments.push_back(whole);
    }
    for (const auto& seg : segments) {
        auto words =
            seg.known
                ? shellSplit(seg.text)
                : Result<std::vector<std::string>>(Error{"its value is not known: " + seg.why});
        if (!words.ok()) {
            notes.push_back({NoteLevel::Warning, seg.file, seg.line, "",
                             "--extra-args piece '" + seg.text + "' not split: " + words.error() +
                                 "; kept verbatim"});
            ScriptFlag sf;
            sf.flag = "--extra-args";
            sf.values = {seg.text};
            sf.file = seg.file;
            sf.line = seg.line;
            sf.known = false;
            out.push_back(sf);
            continue;
        }
        std::vector<Field> tokens;
        for (const auto& w : *words) {
            Field f;
            f.text = w;
            f.file = seg.file;
            f.line = seg.line;
            tokens.push_back(f);
        }
        for (const auto& inner : groupFlags(tokens)) {
            out.push_back(toScriptFlag(inner, reading, true));
        }
    }
}

}  // namespace

Result<Interpreted> interpret(const LaunchRead& launch, const ScriptReading& reading,
                              std::vector<LaunchNote>& notes) {
    Interpreted in;
    const auto& argv = launch.argv;
    std::size_t i = 0;
    const std::string where = launch.file + ":" + std::to_string(launch.line);
    if (argv[0].text == "ray") {
        std::size_t dash = argv.size();
        for (std::size_t j = 3; j < argv.size(); ++j) {
            if (argv[j].text == "--") {
                dash = j;
                break;
            }
            const std::string& t = argv[j].text;
            if (t.rfind("--runtime-env-json=", 0) == 0) {
                Field f = argv[j];
                f.text = t.substr(std::string("--runtime-env-json=").size());
                in.runtimeEnvJson = f;
            } else if (t == "--runtime-env-json" && j + 1 < argv.size()) {
                in.runtimeEnvJson = argv[++j];
            } else if (t == "--address" && j + 1 < argv.size()) {
                ++j;  // the export submits to its own head
            } else if (t.rfind("--address=", 0) != 0) {
                in.submitArgs.push_back(argv[j]);  // --working-dir, --no-wait, --submission-id
            }
        }
        if (dash + 1 >= argv.size()) {
            return Error{where + ": `ray job submit` without `-- <entrypoint>`"};
        }
        i = dash + 1;
    }
    const std::string first = baseName(argv[i].text);
    if (first.rfind("python", 0) == 0) {
        ++i;
        while (i < argv.size() && !argv[i].text.empty() && argv[i].text[0] == '-') {
            ++i;
        }
    }
    if (i >= argv.size()) {
        return Error{where + ": the launch command names no program"};
    }
    in.program = argv[i].text;
    in.milesScript = baseName(in.program).rfind("run_", 0) == 0;
    const std::string entry = baseName(in.program);
    if (!in.milesScript && entry != "train.py" && entry != "train_async.py") {
        notes.push_back({NoteLevel::Warning, launch.file, launch.line, "launcher.entry_point",
                         "entry point " + in.program +
                             " is neither train.py nor train_async.py; it is kept as "
                             "launcher.entry_point and its flags are read as train.py flags"});
    }
    std::vector<Field> rest(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
    if (isInklingLauncher(in.program) && !rest.empty() && rest[0].known && !rest[0].text.empty() &&
        rest[0].text[0] != '-') {
        // run_inkling.py is a typer app: `train`, `prepare-cp` or `full-train` comes first
        const std::string sub = rest[0].text;
        if (sub != "train") {
            notes.push_back({NoteLevel::Warning, rest[0].file, rest[0].line, "launcher.script",
                             "run_inkling.py " + sub +
                                 ": the recipe is the training run; an export writes "
                                 "`run_inkling.py train` (staged checkpoints, no rsync)"});
        }
        rest.erase(rest.begin());
    }
    for (const auto& rf : groupFlags(rest)) {
        if (in.milesScript && rf.flag == "--extra-args") {
            expandExtraArgs(rf, reading, in.flags, notes);
        } else {
            in.flags.push_back(toScriptFlag(rf, reading, false));
        }
    }
    return in;
}

std::string flagText(const ScriptFlag& f) {
    std::vector<std::string> words;
    if (!f.flag.empty()) {
        words.push_back(f.flag);
    }
    words.insert(words.end(), f.values.begin(), f.values.end());
    return shellJoin(words);
}

}  // namespace runplane::plan::launch::detail
