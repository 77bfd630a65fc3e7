#pragma once
// Internal: evaluates a parsed launch script WITHOUT running anything. Variables, arrays,
// exports, `source`, `if` blocks and the expansions of the documented subset are computed; every
// other construct becomes a "not understood" note with its line, and the variables it may have
// set are marked unknown so that nothing downstream is guessed. One Evaluator per script; not
// thread-safe (create one per call).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/plan/launch/bash_syntax.h"
#include "backend/plan/launch/launch.h"

namespace runplane::plan::launch::detail {

/// A string with where it was written and whether it is fully known.
struct Value {
    std::string text;
    bool known = true;
    std::string why;  // for unknown values: what made them unknown
    std::string file;
    int line = 0;
};

/// One word of a command after expansion.
struct Field {
    std::string text;
    bool known = true;
    std::string why;
    std::string file;
    int line = 0;
    std::vector<Value> segments;  // "${ARRAY[*]}": the elements the text was joined from
};

struct ExportRecord {
    std::string name;
    std::string value;
    bool known = true;
    bool pinned = true;    // false: NAME="${NAME:-default}" style parameter
    bool derived = false;  // annotated # runplane:derived
    std::string file;
    int line = 0;
};

struct LaunchRead {
    std::vector<Field> argv;
    std::vector<ExportRecord> prefixEnv;  // FOO=1 python ...
    std::string file;
    int line = 0;
};

struct ScriptReading {
    std::optional<LaunchRead> launch;
    std::vector<ExportRecord> exports;  // in order of first export
    std::vector<LaunchNote> notes;
    std::vector<std::string> metaLines;  // YAML of the runplane-meta block
    std::string flavourMark;
    std::map<std::pair<std::string, int>, std::string> annotations;  // (file, line) -> comment
    std::set<std::string> modelFiles;            // sourced models/*.sh that were read
    std::vector<std::string> modelStems;         // every sourced models/<stem>.sh, read or not
    std::map<std::string, std::string> scalars;  // known scalar variables at the end
};

/// sourceRoots: folders besides the script's own folder tree that `source` may read from (the
/// recipes' models/, --source-root). A source outside all of them is refused unread.
ScriptReading readScript(std::string_view text, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& sourceRoots = {});

class Evaluator {
  public:
    Evaluator(std::string mainPath, const std::vector<std::pair<std::string, std::string>>& env,
              const std::vector<std::string>& sourceRoots = {});
    void runFile(std::string_view text, const std::string& path, int depth);
    ScriptReading take();

    // --- expansion (bash_expand.cpp) ---
    std::vector<Field> expandWord(const Word& word, bool split);
    /// The word as one string (assignment context: no splitting; lists joined by spaces).
    Value scalarOf(const Word& word);

  private:
    struct Var {
        std::vector<Value> values;
        bool isArray = false;
        bool exported = false;
        bool unknown = false;
        std::string why;
        bool selfParam = false;  // last assigned as NAME="${NAME:-...}"
    };
    struct ParamResult {
        bool list = false;  // ${A[@]} / ${A[*]} / $@
        bool star = false;  // ${A[*]}
        std::vector<Value> items;
        Value scalar;
    };

    std::string m_mainPath;
    std::string m_file;  // the file being read
    int m_depth = 0;
    std::map<std::string, Var> m_vars;
    bool m_stopped = false;
    std::set<std::string> m_reportedUnset;
    ScriptReading m_out;
    std::vector<std::string> m_roots;  // canonical folders `source` may read from
    std::set<std::tuple<std::string, int, std::string>> m_noteKeys;  // (file, line, message)
    bool m_notesClipped = false;
    // limits (bash_limits.h)
    std::uint64_t m_work = 0;
    bool m_budgetHit = false;
    int m_exprNest = 0;  // expandWord recursion
    int m_nodeNest = 0;  // evalNodes recursion (if blocks, source)
    int m_column = 0;    // column of the outermost word being expanded

    void note(NoteLevel level, int line, std::string message, int column = 0);
    /// A limit hit: an error note at file:line:column.
    void limitHit(int line, const std::string& message);
    /// Counts expansion work; false (and reading stops) once the budget is spent.
    bool charge(std::uint64_t units, int line);
    Value unknownValue(int line, std::string why) const;
    bool insideRoots(const std::string& canonicalPath) const;

    // expansion
    ParamResult evalParam(const std::string& expr, bool quoted, int line);
    Value evalCommandSubst(const std::string& text, int line);
    Value evalArith(const std::string& text, int line);
    Value evalSeq(const std::vector<long long>& args, const std::string& text, int line);
    std::optional<Value> lookup(const std::string& name, int line, bool* isSet);

    // commands (bash_eval.cpp)
    enum class CmdKind { Assign, Export, Source, Unset, Exit, Launch, Ignorable, Unknown };
    void evalNodes(const std::vector<Node>& nodes);
    void evalNode(const Node& node);
    void evalIf(const Node& node);
    void evalCommand(const SimpleCommand& cmd);
    CmdKind classify(const SimpleCommand& cmd, std::vector<Field>* fields, std::string* what);
    void assign(const Assignment& a);
    void doExport(const SimpleCommand& cmd, const std::vector<Field>& fields);
    void doSource(const SimpleCommand& cmd, const std::vector<Field>& fields);
    void recordExport(const std::string& name, const Word* valueWord, int line);
    void taint(const std::vector<Node>& nodes, int line, const std::string& what);
    void taintCommand(const SimpleCommand& cmd, int line, const std::string& what);
    void taintName(const std::string& name, int line, const std::string& what);
    enum class Truth { False, True, Unknown };
    Truth evalCondition(const std::vector<Node>& cond, std::string* why);
    Truth evalTestCommand(const SimpleCommand& cmd, std::string* why);
};

/// The command as written (assignments and words), clipped to 90 characters, for messages.
std::string commandText(const SimpleCommand& cmd);

/// True when NAME's value word is exactly ${NAME...} / $NAME (a parameter with a default).
bool isSelfParameter(const Word& word, const std::string& name);

}  // namespace runplane::plan::launch::detail
