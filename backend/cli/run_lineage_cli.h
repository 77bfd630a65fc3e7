#pragma once
// Run lineage in runplanectl (issue 49, docs/history.md "Run lineage"): `runs show RUN`,
// `runs parent RUN PARENT[@STEP] [--fork]` / `runs parent RUN --clear`, and what `submit
// --resumes / --forks` (or the launch's checkpoint path) records.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace runplane::cli {

struct CliContext;

/// Adds `show` and `parent` under the `runs` command.
void addRunLineageCommands(CLI::App& runs, CliContext& context);

/// Before a launch (`submit`, `dispatch launch`): checks `resumes` / `forks` ("RUN" or
/// "RUN@STEP"; at most one given) and that the parent is in the history at `historyPath`, opened
/// read-only. Returns "" when there is nothing to check or it is fine, else the error (to print
/// with exit 2 before anything starts).
std::string checkNamedParent(const std::string& historyPath, const std::string& resumes,
                             const std::string& forks);

/// After a submit or a dispatch launch: records the run's parent in the history at `historyPath`,
/// from `resumes` / `forks` ("RUN" or "RUN@STEP"; at most one given) or else detected from the
/// launch's argv. Returns a line to print ("" when there is no parent); an error line starts with
/// "error: ".
std::string recordLaunchLineage(const std::string& historyPath, const std::string& runId,
                                const std::string& resumes, const std::string& forks,
                                const std::vector<std::string>& argv, const std::string& workdir);

/// The LINEAGE cell of `runplanectl runs`: "resume of P@S" / "fork of P@S" ("" when none).
std::string lineageCell(const std::string& kind, const std::string& parent, long long step);

}  // namespace runplane::cli
