#pragma once
// Internal: evaluates a parsed launch script WITHOUT running anything. Variables, arrays,
// exports, `source`, `if` blocks and the expansions of the documented subset are computed; every
// other construct becomes a "not understood" note with its line, and the variables it may have
// set are marked unknown so that nothing downstream is guessed. One Evaluator per script; not
// thread-safe (create one per call).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/launch/bash_expand.h"

namespace runplane::plan::launch::detail {

/// sourceRoots: folders besides the script's own folder tree that `source` may read from (the
/// recipes' models/, --source-root). A source outside all of them is refused unread.
/// expansionBudget: the expansion-work budget, 0 for kMaxExpansionWork (bash_limits.h).
ScriptReading readScript(std::string_view text, const std::string& path,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         const std::vector<std::string>& sourceRoots = {},
                         std::uint64_t expansionBudget = 0);

class Evaluator : public Expander {
  public:
    using Expander::Expander;
    void runFile(std::string_view text, const std::string& path, int depth);
    /// The parser's issues as notes: limits are errors at their column, the rest warnings.
    void noteSyntaxIssues(const std::vector<SyntaxIssue>& issues);
    ScriptReading take();

  private:
    bool insideRoots(const std::string& canonicalPath) const;

    // commands (bash_eval.cpp)
    enum class CmdKind { Assign, Export, Source, Unset, Exit, Launch, Ignorable, Unknown };
    void evalNodes(const std::vector<Node>& nodes);
    void evalNode(const Node& node);
    void evalIf(const Node& node);
    /// A parsed `case` whose subject is known: the matching item is read (bash_case.cpp); false
    /// when it cannot be decided here.
    bool evalCase(const Node& node);
    /// An AND-OR list of test commands, assignments, ignorable commands and exits, or a launch
    /// followed by `|| true` and the like (bash_lists.cpp); false when it cannot be decided.
    bool evalAndOrList(const Node& node, const std::vector<CmdKind>& kinds);
    void evalCommand(const SimpleCommand& cmd);
    /// `read -ra NAME <<< WORD`; false when the command is not of that form.
    bool evalRead(const SimpleCommand& cmd);
    CmdKind classify(const SimpleCommand& cmd, std::vector<Field>* fields, std::string* what);
    void assign(const Assignment& a);
    void doExport(const SimpleCommand& cmd, const std::vector<Field>& fields);
    void doSource(const SimpleCommand& cmd, const std::vector<Field>& fields);
    /// `[exec] bash FILE ARGS` / `./FILE ARGS` before the launch: FILE read as the child shell
    /// (bash_child.cpp); false when the command is not of that form or FILE is not there.
    bool runChildScript(const SimpleCommand& cmd, const std::vector<Field>& fields);
    /// Set by runChildScript: the next doSource reads its file as the main script of a shell of
    /// its own ($0, depth 0: its Ray bring-up and pre-launch steps are the run's).
    bool m_sourceAsMain = false;
    /// `NAME=value source FILE` (bash_source.cpp): NAME holds value while FILE is read.
    void sourceWithAssignments(const SimpleCommand& cmd, const std::vector<Field>& fields);
    void recordExport(const std::string& name, const Word* valueWord, int line);
    void taint(const std::vector<Node>& nodes, int line, const std::string& what);
    void taintCommand(const SimpleCommand& cmd, int line, const std::string& what);
    void taintName(const std::string& name, int line, const std::string& what);
    enum class Truth { False, True, Unknown };
    Truth evalCondition(const std::vector<Node>& cond, std::string* why);
    Truth evalTestCommand(const SimpleCommand& cmd, std::string* why);
    /// Only echo / printf and an exit: the body of a guard clause.
    static bool isGuardBody(const std::vector<Node>& body);
    /// A `while [[ $# -gt 0 ]]` loop over the script's arguments: it runs zero times (info note).
    bool argumentLoopRunsZeroTimes(const Node& node);
    /// miles' model-args lines ending at the `read` on readLine: a definition of NAME to carry.
    void carryPythonModelArgs(int readLine, const std::string& name);
    std::set<std::string> m_conditionParams;  // parameters the last condition read

    // pre-launch steps (bash_prelaunch.cpp)
    std::vector<std::string> m_lines;   // the main script's lines
    std::set<std::string> m_probeVars;  // variables a run-time probe sets (symbolic)
    std::set<std::string> m_bound;      // variables a pre-launch step already binds
    /// `set -e` in force at this point of the main script (its own `set` lines): a pre-launch
    /// step read while it was off runs with it off in the export too (a `kill -9 "$pid"` of a
    /// process gone meanwhile must not end the job when it did not end the original).
    bool m_errexit = false;
    /// A node of the main script before the launch that is a pre-launch step: records it.
    bool capturePreLaunch(const Node& node);
    void addPreLaunch(const Node& node, const std::string& what);
    /// The node's lines verbatim, with the script's own known scalars it reads bound in front.
    ScriptReading::PreLaunchStep verbatimStep(const Node& node, bool bindOnce);
    /// A skipped construct that may set `names`: its text, each known array it extends written
    /// in front (`EVAL_ARGS=(...)` before `EVAL_ARGS+=(...)` in a loop), for a splice's export.
    void recordDefinition(const Node& node, const std::set<std::string>& names);
    void setProbeVar(const std::string& name, int line);
    void recordRay(const std::vector<Field>& fields);

    // functions and here-documents (bash_functions.cpp)
    std::map<std::string, std::shared_ptr<const Node>> m_functions;  // defined so far
    std::set<std::string> m_carriedFunctions;  // definitions already in a pre-launch step
    int m_callDepth = 0;
    /// A function definition: remembered, nothing runs.
    void defineFunction(const Node& node);
    /// A node that calls a script function or feeds a here-document; false when it is neither.
    bool evalFunctionOrHereDoc(const Node& node);
    void callFunction(const Node& node, const SimpleCommand& cmd, const std::vector<Field>& fields);
    /// `NAME=$(fn ...)` of a script function before the launch: carried; false otherwise.
    bool carryFunctionSubst(const Node& node);
    /// The command feeds its here-document to a shell (`bash -s <<'EOF'`, `docker run ... bash
    /// -s <<'EOF'`): the body is read as the script it is.
    bool readHereDocScript(const Node& node, const std::vector<Field>& fields);
    /// The nodes hold a launch command (syntactically; calls of known functions followed).
    bool containsLaunch(const std::vector<Node>& nodes) const;
    bool containsLaunch(const std::vector<Node>& nodes, int depth,
                        std::set<std::string>& followed) const;
    int m_totalCalls = 0;  // function calls read in place, bounded (kMaxFunctionCalls)
    /// The given line ranges of the main script verbatim, with the script's own known scalars
    /// they read bound in front.
    ScriptReading::PreLaunchStep verbatimRanges(const std::vector<std::pair<int, int>>& ranges);
};

/// Every name the nodes may assign (assignments, export, printf -v, read, declare, loops).
void collectNames(const std::vector<Node>& nodes, std::set<std::string>& names);

/// The command as written (assignments and words), clipped to 90 characters, for messages.
std::string commandText(const SimpleCommand& cmd);

}  // namespace runplane::plan::launch::detail
