// `bash other.sh "$@"` / `exec bash other.sh "$@"` / `./other.sh ARGS` before the launch (issue 45:
// vime's run-qwen3-4B-delta-disk.sh exports its settings and ends in `exec bash
// "${SCRIPT_DIR}/run-qwen3-4B-disk-common.sh" "$@"`, which holds the launch): the other script is
// read as the child shell bash starts, with only the exported variables and the given arguments
// ($1, $@, $#). After `exec` the reading ends there (exec replaces the shell); otherwise the
// variables come back as they were. A file that is not there, or outside the allowed folders, is
// left to the ignorable-command path (doSource reports it).

#include <filesystem>

#include "backend/launch/bash_eval.h"

namespace runplane::plan::launch::detail {

bool Evaluator::runChildScript(const SimpleCommand& cmd, const std::vector<Field>& fields) {
    if (m_out.launch.has_value() || fields.empty() || !fields[0].known) {
        return false;
    }
    const bool exec = !cmd.words.empty() && cmd.words[0].literal() == "exec";
    std::string first = fields[0].text;
    first = first.substr(
        first.find_last_of('/') == std::string::npos ? 0 : first.find_last_of('/') + 1);
    std::size_t i = 0;
    if (first == "bash" || first == "sh") {
        i = 1;
        while (i < fields.size() && fields[i].known && fields[i].text.rfind('-', 0) == 0) {
            if (fields[i].text.find_first_of("cs") != std::string::npos) {
                return false;  // -c TEXT, -s (stdin): not a script file
            }
            ++i;
        }
    }
    if (i >= fields.size() || !fields[i].known || !fields[i].text.ends_with(".sh")) {
        return false;
    }
    namespace fs = std::filesystem;
    fs::path p(fields[i].text);
    if (p.is_relative()) {
        p = fs::path(m_file).parent_path() / p;
    }
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
        return false;
    }
    note(NoteLevel::Info, cmd.line,
         std::string(exec ? "exec: " : "") + "the script " + fields[i].text +
             " is read as the child shell it runs in (its exported variables and arguments)");
    auto savedVars = m_vars;
    for (auto it = m_vars.begin(); it != m_vars.end();) {
        it = it->second.exported ? std::next(it) : m_vars.erase(it);
    }
    auto savedArgs = m_args;
    std::vector<Value> args;
    for (std::size_t j = i + 1; j < fields.size(); ++j) {
        Value v;
        v.text = fields[j].text;
        v.known = fields[j].known;
        v.why = fields[j].why;
        v.file = fields[j].file;
        v.line = fields[j].line;
        v.symbolic = fields[j].symbolic;
        args.push_back(std::move(v));
    }
    m_args = std::move(args);
    std::vector<Field> sourceFields = {fields[0], fields[i]};
    sourceFields[0].text = "source";
    sourceFields[1].text = p.string();
    const bool wasStopped = m_stopped;
    const auto exitAt = m_out.exitAt;
    const auto savedLines = m_lines;
    m_sourceAsMain = true;
    doSource(cmd, sourceFields);
    m_sourceAsMain = false;  // (doSource may have refused the file before reading it)
    m_lines = savedLines;
    m_args = std::move(savedArgs);
    if (exec) {
        m_stopped = true;  // exec replaced the shell: nothing after it runs
    } else {
        m_vars = std::move(savedVars);
        m_stopped = wasStopped;  // the child's `exit` ends the child only
        if (m_out.launch.has_value() || exitAt.second == 0) {
            m_out.exitAt = exitAt;
        }
    }
    return true;
}

}  // namespace runplane::plan::launch::detail
