#pragma once
// Internal: the state the launch-script reader keeps while it reads -- the values it computes
// (with where they were written and whether they are known), the variables, the notes and the
// limits of bash_limits.h. It is the base of the Expander (bash_expand.h, words) and the
// Evaluator (bash_eval.h, commands): the include order is state <- expand <- eval, never back.
// Not thread-safe (one per import).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/launch/bash_syntax.h"
#include "backend/launch/launch.h"

namespace runplane::plan::launch::detail {

/// A string with where it was written and whether it is fully known.
struct Value {
    std::string text;
    bool known = true;
    std::string why;  // for unknown values: what made them unknown
    std::string file;
    int line = 0;
    /// Holds ${NAME} of a variable that is neither set nor given with --env: a parameter of the
    /// recipe, kept symbolic (docs/launch-scripts.md, "Parameters").
    bool symbolic = false;
    std::string raw;  // array elements: the element word as written
};

/// One word of a command after expansion.
struct Field {
    std::string text;
    bool known = true;
    std::string why;
    std::string file;
    int line = 0;
    std::vector<Value> segments;  // "${ARRAY[*]}": the elements the text was joined from
    bool symbolic = false;        // holds a ${NAME} parameter (see Value)
    std::string raw;              // the word as written (kept for a splice of unknown text)
};

/// A variable the script reads but neither sets nor gets with --env, and where it is read.
struct ParameterUse {
    std::string name;
    std::vector<std::pair<std::string, int>> uses;  // (file, line)
    bool required = false;                          // ${NAME:?...} or a guard clause
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
    /// The `exit` that ended the reading (file, line); line 0 when none did.
    std::pair<std::string, int> exitAt{"", 0};
    std::vector<ExportRecord> exports;  // in order of first export
    std::vector<LaunchNote> notes;
    std::vector<std::string> metaLines;  // YAML of the runplane-meta block
    std::string flavourMark;
    std::map<std::pair<std::string, int>, std::string> annotations;  // (file, line) -> comment
    std::set<std::string> modelFiles;            // sourced models/*.sh that were read
    std::vector<std::string> modelStems;         // every sourced models/<stem>.sh, read or not
    std::map<std::string, std::string> scalars;  // known scalar variables at the end
    std::vector<ParameterUse> parameters;        // in order of first use
    /// miles builds MODEL_ARGS in Python (`$(python3 .../model_args_utils.py NAME)` read into
    /// an array with `read -ra`): the arrays that hold such model arguments.
    std::set<std::string> pythonModelArgArrays;
    /// What in the script says it is a miles script (entry point path, model_args_utils.py, ...).
    std::vector<std::string> milesHints;
    /// `ray start` / `ray stop` of the script itself (before the launch), expanded.
    std::vector<std::vector<Field>> rayCommands;
    /// Shell text run before the job, verbatim: background servers, the loops waiting for them,
    /// run-time probes (`$(nvidia-smi ...)` and the if blocks deciding on them).
    struct PreLaunchStep {
        std::string file;
        int line = 0;
        int endLine = 0;
        std::string text;
    };
    std::vector<PreLaunchStep> preLaunch;
    /// NAME -> the last construct of the script itself, not understood, that may set it (a `for`
    /// loop building an array, ...): carried verbatim into an export that splices ${NAME[@]}.
    std::map<std::string, PreLaunchStep> definitions;
};

class ReaderState {
  public:
    ReaderState(std::string mainPath, const std::vector<std::pair<std::string, std::string>>& env,
                const std::vector<std::string>& sourceRoots);
    /// The expansion-work budget (bash_limits.h: kMaxExpansionWork unless set before reading).
    void setExpansionBudget(std::uint64_t units) { m_workLimit = units; }

  protected:
    struct Var {
        std::vector<Value> values;
        bool isArray = false;
        bool exported = false;
        bool unknown = false;
        std::string why;
        bool selfParam = false;  // last assigned as NAME="${NAME:-...}"
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
    std::uint64_t m_workLimit;  // kMaxExpansionWork unless setExpansionBudget
    bool m_budgetHit = false;
    int m_exprNest = 0;  // expandWord recursion
    int m_nodeNest = 0;  // evalNodes recursion (if blocks, source)
    int m_column = 0;    // column of the outermost word being expanded
    /// Inside a call of a script function: its arguments ($1, $#, $@); unset at the top level,
    /// where the script is read as run without arguments (unless --env N=VALUE gives $N).
    std::optional<std::vector<Value>> m_args;
    bool m_argCountRead = false;  // $# was read at the top level (a guard on the arguments)

    void note(NoteLevel level, int line, std::string message, int column = 0);
    /// A limit hit: an error note at file:line:column.
    void limitHit(int line, const std::string& message);
    /// Counts expansion work; false (and reading stops) once the budget is spent.
    bool charge(std::uint64_t units, int line);
    /// Work units left before the budget is spent (what one word may still build).
    std::uint64_t workLeft() const { return m_work < m_workLimit ? m_workLimit - m_work : 0; }
    Value unknownValue(int line, std::string why) const;
    std::optional<Value> lookup(const std::string& name, int line, bool* isSet);
    /// NAME is read while unset: records the use and returns the symbolic value ${NAME}.
    Value parameterValue(const std::string& name, int line, bool required);
};

}  // namespace runplane::plan::launch::detail
