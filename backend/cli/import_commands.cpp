// runplanectl import-runs PATH...: runs from TensorBoard event files, W&B offline runs and CSV /
// JSON-lines files
// read into the run history (db/imports, docs/imports.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "db/history/history.h"
#include "db/imports/run_import.h"

namespace {

using nlohmann::json;

struct ImportOptions {
    std::string history;
    std::vector<std::string> paths;
    bool json = false;
    bool dryRun = false;
};

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void runImport(const ImportOptions& options, runplane::cli::CliContext& context) {
    std::unique_ptr<runplane::db::History> history;
    if (!options.dryRun) {
        auto opened = runplane::db::History::open(options.history);
        if (!opened.ok()) {
            std::cerr << "runplanectl import-runs: " << opened.error() << "\n";
            context.exitCode = 2;
            return;
        }
        history = std::move(*opened);
    }
    json out = json::array();
    int problems = 0;
    for (const std::string& path : options.paths) {
        auto sources = runplane::imports::findImportSources(path);
        if (!sources.ok()) {
            std::cerr << "runplanectl import-runs: " << sources.error() << "\n";
            ++problems;
            continue;
        }
        for (const auto& source : *sources) {
            auto run = runplane::imports::readImportSource(source);
            if (!run.ok()) {
                std::cerr << "runplanectl import-runs: " << run.error() << "\n";
                ++problems;
                continue;
            }
            runplane::imports::StoreResult stored;
            stored.runId = runplane::imports::importedRunId(*run);
            stored.seriesCount = run->series.size();
            if (history) {
                auto r = runplane::imports::storeImportedRun(*history, *run, nowNs());
                if (!r.ok()) {
                    std::cerr << "runplanectl import-runs: " << path << ": " << r.error() << "\n";
                    ++problems;
                    continue;
                }
                stored = *r;
            }
            if (!run->stopped.empty()) {
                ++problems;
            }
            out.push_back({{"run_id", stored.runId.value()},
                           {"name", run->name},
                           {"format", run->format},
                           {"files", run->files},
                           {"content_sha256", run->contentSha256},
                           {"series", run->series.size()},
                           {"points", run->pointCount()},
                           {"skipped_values", run->skippedValues},
                           {"already_present", stored.alreadyPresent},
                           {"samples_inserted", stored.samplesInserted},
                           {"stopped", run->stopped}});
            if (options.json) {
                continue;
            }
            if (stored.alreadyPresent) {
                std::cout << "already imported: " << stored.runId.value() << " " << run->name
                          << " (" << run->format << ", same content); nothing added\n";
            } else {
                std::cout << (history ? "imported " : "would import ") << stored.runId.value()
                          << " " << run->name << " (" << run->format << ", " << run->series.size()
                          << " series, " << run->pointCount() << " points) from " << path << "\n";
            }
            if (run->skippedValues > 0) {
                std::cout << "  skipped " << run->skippedValues
                          << " values that are not scalars (images, histograms, text)\n";
            }
            if (!run->stopped.empty()) {
                std::cerr << "runplanectl import-runs: " << run->stopped
                          << " (what came before it is imported)\n";
            }
        }
    }
    if (options.json) {
        std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    }
    if (problems > 0 && context.exitCode == 0) {
        context.exitCode = 1;
    }
}

const bool kImportGroup = runplane::cli::registerCommands([](CLI::App& app,
                                                             runplane::cli::CliContext& context) {
    auto options = std::make_shared<ImportOptions>();
    auto* cmd = app.add_subcommand("import-runs",
                                   "Import runs from TensorBoard event files, W&B offline runs "
                                   "(.wandb), CSV or JSON-lines files into the history");
    options->history = runplane::control::defaultHistoryPath();
    cmd->add_option("--history", options->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    cmd->add_option("paths", options->paths,
                    "Event files, .wandb files, CSV / JSON-lines files, or folders holding them")
        ->required();
    cmd->add_flag("--json", options->json, "Print JSON");
    cmd->add_flag("--dry-run", options->dryRun, "Read and report; write nothing");
    cmd->callback([options, &context] { runImport(*options, context); });
});

}  // namespace
