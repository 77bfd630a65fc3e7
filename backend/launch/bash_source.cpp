// The files a script reads: the script itself (CRLF endings, comments, parse issues) and the
// files it sources, which must stay inside the allowed folders (docs/launch-scripts.md, "Sourced
// files"). A refused file is never opened.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/export_plan.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
}  // namespace

bool Evaluator::insideRoots(const std::string& canonicalPath) const {
    const std::filesystem::path p(canonicalPath);
    for (const auto& root : m_roots) {
        const std::filesystem::path r(root);
        auto [rootEnd, pathIt] = std::mismatch(r.begin(), r.end(), p.begin(), p.end());
        (void)pathIt;
        if (rootEnd == r.end()) {
            return true;
        }
    }
    return false;
}

void Evaluator::noteSyntaxIssues(const std::vector<SyntaxIssue>& issues) {
    for (const auto& issue : issues) {
        if (issue.limit) {
            note(NoteLevel::Error, issue.line, "limit: " + issue.message,
                 issue.column > 0 ? issue.column : 1);
        } else {
            note(NoteLevel::Warning, issue.line, "syntax not understood: " + issue.message);
        }
    }
}

void Evaluator::runFile(std::string_view text, const std::string& path, int depth) {
    const std::string savedFile = m_file;
    const int savedDepth = m_depth;
    m_file = path;
    m_depth = depth;
    // CRLF line endings read as LF (a Windows editor's save); a lone CR stays (and is escaped in
    // messages)
    std::string unixText;
    if (const auto crlf = text.find("\r\n"); crlf != std::string_view::npos) {
        unixText.reserve(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
                unixText += text[i];
            }
        }
        const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + crlf, '\n'));
        note(NoteLevel::Info, line, "the file has CRLF (Windows) line endings; read as LF");
        text = unixText;
    }
    if (depth == 0) {
        m_lines.clear();
        std::size_t start = 0;
        while (start <= text.size()) {
            const std::size_t nl = text.find('\n', start);
            m_lines.emplace_back(text.substr(
                start, nl == std::string_view::npos ? text.size() - start : nl - start));
            if (nl == std::string_view::npos) {
                break;
            }
            start = nl + 1;
        }
    }
    ParsedScript parsed = parseBash(text);
    noteSyntaxIssues(parsed.issues);
    for (const auto& c : parsed.comments) {
        if (!c.fullLine) {
            m_out.annotations[{path, c.line}] = trim(c.text);
            continue;
        }
        if (depth != 0) {
            continue;
        }
        const std::string t = !c.text.empty() && c.text[0] == ' ' ? c.text.substr(1) : c.text;
        if (t.rfind(kMetaPrefix, 0) == 0) {
            m_out.metaLines.push_back(t.substr(std::string(kMetaPrefix).size()));
        } else if (t.rfind(kFlavourPrefix, 0) == 0) {
            m_out.flavourMark = trim(t.substr(std::string(kFlavourPrefix).size()));
        }
    }
    evalNodes(parsed.nodes);
    m_file = savedFile;
    m_depth = savedDepth;
}
void Evaluator::doSource(const SimpleCommand& cmd, const std::vector<Field>& fields) {
    if (fields.size() < 2) {
        note(NoteLevel::Warning, cmd.line, "not understood: source without a file");
        return;
    }
    const Field& f = fields[1];
    if (!f.known) {
        note(NoteLevel::Warning, cmd.line,
             "not understood: source of a path that is not known (" + f.why + ")");
        return;
    }
    namespace fs = std::filesystem;
    const fs::path p(f.text);
    const bool isModel = p.parent_path().filename() == "models";
    if (isModel) {
        m_out.modelStems.push_back(p.stem().string());
    }
    std::vector<fs::path> candidates;
    const fs::path here = fs::path(m_file).parent_path();
    if (p.is_absolute()) {
        candidates.push_back(p);
    } else {
        fs::path dir = here;
        for (int up = 0; up < 4; ++up) {
            candidates.push_back(dir / p);
            if (!dir.has_parent_path() || dir.parent_path() == dir || dir.empty()) {
                break;
            }
            dir = dir.parent_path();
        }
    }
    fs::path found;
    std::size_t foundAt = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        std::error_code ec;
        if (fs::is_regular_file(candidates[i], ec)) {
            found = candidates[i].lexically_normal();
            foundAt = i;
            break;
        }
    }
    if (found.empty()) {
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": no such file" +
                 (isModel ? "; MODEL_ARGS stays empty (model '" + p.stem().string() +
                                "' is still taken from the file name)"
                          : ""));
        return;
    }
    // The script is untrusted: it may only pull in files from the allowed folders (symlinks
    // resolved), and a refused file is never opened, so none of its text can reach a message.
    std::error_code ec;
    const fs::path real = fs::canonical(found, ec);
    if (ec || !insideRoots(real.string())) {
        std::string roots;
        for (const auto& r : m_roots) {
            roots += (roots.empty() ? "" : ", ") + r;
        }
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": refused: " + found.string() +
                 (!ec && real != found ? " (-> " + real.string() + ")" : "") +
                 " is outside the folders a script may source (" + roots +
                 "); not read. Allow a folder with --source-root DIR");
        return;
    }
    if (foundAt > 0) {
        note(NoteLevel::Info, cmd.line,
             "source " + f.text + ": read " + found.string() +
                 " (the path is relative; resolved against the script's folders)");
    }
    if (m_depth >= kMaxSourceDepth) {
        note(NoteLevel::Warning, cmd.line, "source " + f.text + ": sourced too deeply; skipped");
        return;
    }
    const auto size = fs::file_size(real, ec);
    if (ec || size > kMaxScriptBytes) {
        m_column = 1;
        limitHit(cmd.line, "source " + f.text + ": " + found.string() + " is larger than " +
                               std::to_string(kMaxScriptBytes >> 20) + " MiB; not read");
        return;
    }
    std::ifstream in(real, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    if (!in) {
        note(NoteLevel::Warning, cmd.line, "source " + f.text + ": cannot read " + found.string());
        return;
    }
    const std::string content = buf.str();
    if (content.find('\0') != std::string::npos) {
        note(NoteLevel::Warning, cmd.line,
             "source " + f.text + ": " + found.string() + " is not a text file; not read");
        return;
    }
    if (isModel) {
        m_out.modelFiles.insert(found.string());
    }
    if (m_sourceAsMain) {  // `bash other.sh`: the child shell's own script (bash_child.cpp)
        m_sourceAsMain = false;
        const std::string savedMain = m_mainPath;
        m_mainPath = found.string();
        runFile(content, found.string(), m_depth);
        m_mainPath = savedMain;
        return;
    }
    runFile(content, found.string(), m_depth + 1);
}
}  // namespace runplane::plan::launch::detail

namespace runplane::plan::launch::detail {

// `MODEL_ARGS_ROTARY_BASE=5000000 source models/qwen3-8B.sh` (issue 45): a builtin's prefix
// assignment lasts for that command, so NAME holds the value while FILE is read and its old value
// (or none) afterwards. A model file's override travels with the export, which sources the model
// file itself: the assignment becomes a pre-launch line (`NAME=value`) of the job script.
void Evaluator::sourceWithAssignments(const SimpleCommand& cmd, const std::vector<Field>& fields) {
    std::map<std::string, std::optional<Var>> saved;
    for (const auto& a : cmd.assigns) {
        const auto it = m_vars.find(a.name);
        if (!saved.count(a.name)) {
            saved[a.name] = it == m_vars.end() ? std::nullopt : std::optional<Var>(it->second);
        }
    }
    std::string lines;
    for (const auto& a : cmd.assigns) {
        assign(a);
        const auto it = m_vars.find(a.name);
        const bool plain = !a.isArray && it != m_vars.end() && !it->second.unknown &&
                           it->second.values.size() == 1 && !it->second.values[0].symbolic;
        lines +=
            a.name + "=" + (plain ? shellQuote(it->second.values[0].text) : a.value.raw) + "\n";
    }
    const std::size_t modelFilesBefore = m_out.modelStems.size();
    doSource(cmd, fields);
    for (const auto& [name, var] : saved) {
        if (var) {
            m_vars[name] = *var;
        } else {
            m_vars.erase(name);
        }
    }
    if (m_out.modelStems.size() > modelFilesBefore && !m_out.launch.has_value() &&
        m_file == m_mainPath) {
        m_out.preLaunch.push_back({m_file, cmd.line, cmd.endLine, lines});
        note(NoteLevel::Info, cmd.line,
             "the model file is read with " + lines.substr(0, lines.find('=')) +
                 " set for it; the export sets it the same way before sourcing the model file");
    }
}

}  // namespace runplane::plan::launch::detail
