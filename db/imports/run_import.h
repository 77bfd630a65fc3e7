#pragma once
// Runs from other trackers, read into the history (issue 49, docs/imports.md): TensorBoard event
// files (the tfevents record format and its Event/Summary protobuf records), W&B offline runs
// (the .wandb transaction log) and a CSV / JSON-lines
// fallback. A reader turns files into an ImportedRun (scalar series of (step, wall time, value));
// storeImportedRun writes it into a History as a run like any other, its origin in the run's
// provenance, identified by the content of its files so that importing twice adds nothing.
// Plain C++: no Qt, no gRPC (the protobuf decoding stays inside this library).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/ids.h"
#include "common/result.h"
#include "db/history/history.h"

namespace runplane::imports {

/// A step read as a number: its integer part, or -1 when it is not finite or beyond an int64.
inline std::int64_t stepFromNumber(double v) {
    return (v > -9.2e18 && v < 9.2e18) ? static_cast<std::int64_t>(v) : -1;
}

/// One scalar reading: the run's own step (-1 when the format has none), its wall time in Unix
/// ns (seconds x 1e9, rounded to the nearest ns) and the value.
struct ImportedPoint {
    std::int64_t step = -1;
    std::int64_t tNs = 0;
    double value = 0;
};

struct ImportedSeries {
    std::string name;                   // the tag / column / key as the file spells it
    std::vector<ImportedPoint> points;  // in file order
};

/// What a reader made of a run's files.
struct ImportedRun {
    std::string
        format;        // a row of importFormats(): "tensorboard", "wandb", "csv", "jsonl", "miles"
    std::string name;  // label: the run's folder or file name
    std::vector<std::string> files;      // the files read, in reading order
    std::string contentSha256;           // of the files' bytes in that order (hex)
    std::vector<ImportedSeries> series;  // in order of first appearance
    /// Empty when every file was read to its end; else where reading stopped and why:
    /// "FILE: stopped at byte N: REASON" (what came before it is imported).
    std::string stopped;
    std::int64_t skippedValues = 0;  // values that are not scalars (images, histograms, text)
    std::int64_t records = 0;        // records / rows read
    nlohmann::json extra = nlohmann::json::object();  // format-specific facts kept in provenance
    std::size_t pointCount() const;
};

/// One run found under a path given to import-runs.
struct ImportSource {
    std::string format;
    std::string name;
    std::vector<std::string> files;
};

/// A format the importer knows: its name, how its files are recognised, and its reader.
struct ImportFormat {
    const char* name;
    const char* recognisedBy;  // for docs and messages
    Result<ImportedRun> (*read)(const ImportSource& source);
};
const std::vector<ImportFormat>& importFormats();

/// The runs under `path`: a file of a known format is one run (event files in one folder are one
/// TensorBoard run); a folder is searched recursively and each folder holding event files is a
/// run, each CSV / JSON-lines file another. Error when the path does not exist or holds none.
Result<std::vector<ImportSource>> findImportSources(const std::string& path);

/// Reads a source with its format's reader.
Result<ImportedRun> readImportSource(const ImportSource& source);

// ---- the readers (each also reachable through importFormats())
Result<ImportedRun> readTensorBoard(const ImportSource& source);
Result<ImportedRun> readCsv(const ImportSource& source);
Result<ImportedRun> readJsonLines(const ImportSource& source);
Result<ImportedRun> readWandb(const ImportSource& source);
/// miles' dashboard folder (`--dump-details DIR --use-miles-dashboard` writes DIR/dashboard/):
/// source.files[0] is that folder; docs/imports.md "miles dashboard".
Result<ImportedRun> readMilesDashboard(const ImportSource& source);
/// A folder named `dashboard` holding `meta.json`.
bool isMilesDashboardDir(const std::string& dir);

/// The run id an imported run gets: "import-" + the first 16 hex digits of its content hash.
RunId importedRunId(const ImportedRun& run);

struct StoreResult {
    RunId runId;
    bool alreadyPresent = false;  // a run with this content was imported before: nothing added
    std::size_t samplesInserted = 0;
    std::size_t seriesCount = 0;
};

/// Writes the run into the history: its samples as series of the pseudo-node "import" (one
/// incarnation per run, so each sample is stored exactly once), one "import" event naming the
/// origin (and where reading stopped), and the run row last (state finished, pinned so that
/// retention keeps it, provenance {"origin": {...}}). A run id already present adds nothing.
Result<StoreResult> storeImportedRun(db::History& history, const ImportedRun& run,
                                     std::int64_t nowNs);

}  // namespace runplane::imports
