#pragma once
// Reading a miles Python launcher (scripts/run_*.py: typer commands over a config dataclass that
// build train.py's argv and call U.execute_train()) by running it with its command step replaced
// (issue 45; docs/launch-scripts.md, "miles' Python launchers"). The launcher runs as the calling
// user in a child Python with a time limit; miles' exec_command functions are replaced by a
// recorder, so no shell command it builds runs (no download, no checkpoint conversion, no Ray, no
// job), and Ray is a stand-in module. What it records comes back as bash text for the ordinary
// import: its `export` lines, `ray start` and `ray job submit ... -- python3 train.py ARGS`.

#include <string>
#include <utility>
#include <vector>

namespace runplane::cli {

struct LauncherRecord {
    bool ok = false;
    std::string script;  // the recorded commands as a bash script (ok)
    std::string error;   // why not (not ok), with the child's last output lines
};

/// Runs `python -c RECORDER LAUNCHER ARGS...` with `env` (import's --env K=V) added to this
/// process's environment; timeoutS bounds it (the child is killed after).
LauncherRecord recordMilesLauncher(const std::string& launcher,
                                   const std::vector<std::string>& args,
                                   const std::vector<std::pair<std::string, std::string>>& env,
                                   const std::string& python, int timeoutS);

}  // namespace runplane::cli
