// The reader state: variables given with --env, the allowed source folders, notes (deduplicated,
// bounded, control characters escaped) and the expansion budget (bash_limits.h).

#include "backend/launch/bash_state.h"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include "backend/launch/bash_limits.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {

ReaderState::ReaderState(std::string mainPath,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& sourceRoots)
    : m_mainPath(std::move(mainPath)), m_workLimit(kMaxExpansionWork) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> roots = {fs::absolute(fs::path(m_mainPath), ec).parent_path()};
    // the model files of the checkout the script lives in (an example's
    // `${SCRIPT_DIR}/../../scripts/models/qwen3-4B.sh`): the nearest `scripts/models` folder of
    // a folder above the script, up to four levels (issue 45); only that folder, not the checkout
    for (fs::path dir = roots.front().parent_path(); roots.size() == 1 && !dir.empty();
         dir = dir.parent_path()) {
        if (fs::is_directory(dir / "scripts" / "models", ec)) {
            roots.push_back(dir / "scripts" / "models");
            break;
        }
        if (dir == dir.parent_path() || std::distance(dir.begin(), dir.end()) <= 1 ||
            std::distance(roots.front().begin(), roots.front().end()) -
                    std::distance(dir.begin(), dir.end()) >=
                4) {
            break;
        }
    }
    roots.insert(roots.end(), sourceRoots.begin(), sourceRoots.end());
    for (const auto& root : roots) {
        // (weakly: the folder of an in-memory script need not exist)
        const fs::path real = fs::weakly_canonical(fs::absolute(root, ec), ec);
        if (!ec && !real.empty()) {
            m_roots.push_back(real.string());
        }
    }
    for (const auto& [key, value] : env) {
        Var v;
        Value val;
        val.text = value;
        val.file = "--env";
        v.values = {val};
        v.exported = true;
        m_vars[key] = v;
    }
}

void ReaderState::note(NoteLevel level, int line, std::string message, int column) {
    // messages quote script text: no raw control characters, and a bounded length
    message = escapeControl(message);
    if (message.size() > kMaxMessageChars) {
        message = message.substr(0, kMaxMessageChars - 3) + "...";
    }
    if (!m_noteKeys.emplace(m_file, line, message).second) {
        return;  // the same construct read twice (e.g. classified, then run)
    }
    if (level != NoteLevel::Error && m_out.notes.size() >= kMaxNotes) {
        if (!m_notesClipped) {
            m_notesClipped = true;
            m_out.notes.push_back(
                {NoteLevel::Warning, m_file, line, "",
                 "more than " + std::to_string(kMaxNotes) + " notes; the rest are not listed"});
        }
        return;
    }
    LaunchNote n;
    n.level = level;
    n.file = m_file;
    n.line = line;
    n.message = std::move(message);
    n.column = column;
    m_out.notes.push_back(std::move(n));
}

void ReaderState::limitHit(int line, const std::string& message) {
    note(NoteLevel::Error, line, "limit: " + message, m_column > 0 ? m_column : 1);
}

bool ReaderState::charge(std::uint64_t units, int line) {
    m_work += units;
    if (m_work > m_workLimit && !m_budgetHit) {
        m_budgetHit = true;
        m_stopped = true;
        const std::string budget = m_workLimit % (1u << 20) == 0
                                       ? std::to_string(m_workLimit >> 20) + " MiB"
                                       : std::to_string(m_workLimit >> 10) + " KiB";
        limitHit(line, "the script's expansions exceed the reader's budget (" + budget +
                           " of text, " + std::to_string(kWordCost) +
                           " bytes a word); the rest of the script is not read");
    }
    return !m_budgetHit;
}

Value ReaderState::unknownValue(int line, std::string why) const {
    if (why.size() > kMaxMessageChars) {  // it is copied into every value derived from this one
        why = why.substr(0, kMaxMessageChars - 3) + "...";
    }
    Value v;
    v.known = false;
    v.why = std::move(why);
    v.file = m_file;
    v.line = line;
    return v;
}

std::optional<Value> ReaderState::lookup(const std::string& name, int line, bool* isSet) {
    auto it = m_vars.find(name);
    if (it == m_vars.end() || (it->second.values.empty() && !it->second.unknown)) {
        *isSet = false;
        return std::nullopt;
    }
    *isSet = true;
    if (it->second.unknown) {
        return unknownValue(line, it->second.why);
    }
    return it->second.values.front();
}

Value ReaderState::parameterValue(const std::string& name, int line, bool required) {
    ParameterUse* use = nullptr;
    for (auto& p : m_out.parameters) {
        if (p.name == name) {
            use = &p;
        }
    }
    if (use == nullptr) {
        m_out.parameters.push_back({name, {}, false});
        use = &m_out.parameters.back();
        note(NoteLevel::Info, line,
             name + " is not set in the script and not given with --env; kept as the parameter ${" +
                 name + "} (give it with --env " + name + "=...)");
    }
    use->required = use->required || required;
    const std::pair<std::string, int> where{m_file, line};
    if (use->uses.size() < 64 &&
        std::find(use->uses.begin(), use->uses.end(), where) == use->uses.end()) {
        use->uses.push_back(where);
    }
    Value v;
    v.text = "${" + name + "}";
    v.symbolic = true;
    v.file = m_file;
    v.line = line;
    return v;
}

}  // namespace runplane::plan::launch::detail
