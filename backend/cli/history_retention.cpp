#include "backend/cli/history_retention.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "backend/control/text_format.h"
#include "common/units/units.h"
#include "db/history/history.h"

namespace runplane::cli {
namespace {

using nlohmann::json;
using runplane::db::History;
using runplane::units::formatBytes;

struct RetentionOptions {
    std::string history;
    bool json = false;
    bool dryRun = false;
    bool vacuum = false;
    bool trustClock = false;
    int rawDays = 0;     // 0: keep the stored value
    int rollupDays = 0;  // 0: keep the stored value
    std::string runId;
};

// Read-write, but never creates: pruning a file that does not exist is a mistake in the path.
std::unique_ptr<History> openExisting(const RetentionOptions& options, CliContext& context) {
    std::error_code ec;
    if (!std::filesystem::exists(options.history, ec)) {
        std::cerr << "runplanectl history: " << options.history << ": no such history file\n";
        context.exitCode = 2;
        return nullptr;
    }
    auto history = History::open(options.history);
    if (!history.ok()) {
        std::cerr << "runplanectl history: " << history.error() << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    return std::move(*history);
}

json policyJson(const runplane::db::RetentionPolicy& p) {
    return {{"raw_days", p.rawDays}, {"rollup_days", p.rollupDays}};
}

void runRetention(const RetentionOptions& options, CliContext& context) {
    auto history = openExisting(options, context);
    if (!history) {
        return;
    }
    auto policy = history->retention();
    if (!policy.ok()) {
        std::cerr << "runplanectl history retention: " << policy.error() << "\n";
        context.exitCode = 1;
        return;
    }
    if (options.rawDays != 0 || options.rollupDays != 0) {
        runplane::db::RetentionPolicy next = *policy;
        if (options.rawDays != 0) {
            next.rawDays = options.rawDays;
        }
        if (options.rollupDays != 0) {
            next.rollupDays = options.rollupDays;
        }
        if (runplane::Status s = history->setRetention(next); !s.ok()) {
            std::cerr << "runplanectl history retention: " << s.error() << "\n";
            context.exitCode = 2;
            return;
        }
        policy = next;
    }
    if (options.json) {
        std::cout << policyJson(*policy).dump(2) << "\n";
    } else {
        std::printf("raw samples (and 1 s / 8 s rollup cells): %d days\n", policy->rawDays);
        std::printf("rollup cells of 64 s and coarser:         %d days\n", policy->rollupDays);
        std::printf("events, eval/* series, pinned runs:       kept\n");
    }
    context.exitCode = 0;
}

void runPrune(const RetentionOptions& options, CliContext& context) {
    auto history = openExisting(options, context);
    if (!history) {
        return;
    }
    runplane::db::PruneOptions prune;
    prune.dryRun = options.dryRun;
    prune.vacuum = options.vacuum;
    prune.trustClock = options.trustClock;
    auto report = history->prune(prune);
    if (!report.ok()) {
        std::cerr << "runplanectl history prune: " << report.error() << "\n";
        context.exitCode = 1;
        return;
    }
    const auto& r = *report;
    if (options.json) {
        std::cout << json{{"dry_run", r.dryRun},
                          {"raw_cutoff_ns", r.rawCutoffNs},
                          {"rollup_cutoff_ns", r.rollupCutoffNs},
                          {"newest_sample_ns", r.newestSampleNs},
                          {"series_pruned", r.seriesPruned},
                          {"samples_deleted", r.samplesDeleted},
                          {"fine_rollups_deleted", r.fineRollupsDeleted},
                          {"rollups_deleted", r.rollupsDeleted},
                          {"rows_deleted", r.rowsDeleted()},
                          {"transactions", r.transactions},
                          {"bytes_before", r.bytesBefore},
                          {"bytes_after", r.bytesAfter},
                          {"bytes_freed", r.bytesBefore - r.bytesAfter},
                          {"free_bytes_after", r.freeBytesAfter}}
                         .dump(2)
                  << "\n";
    } else {
        std::printf(
            "%s %lld rows from %lld series (raw samples before %s: %lld; 1 s / 8 s "
            "rollup cells: %lld; rollup cells before %s: %lld)%s\n",
            r.dryRun ? "would delete" : "deleted", static_cast<long long>(r.rowsDeleted()),
            static_cast<long long>(r.seriesPruned),
            runplane::control::formatLocalTime(r.rawCutoffNs).c_str(),
            static_cast<long long>(r.samplesDeleted), static_cast<long long>(r.fineRollupsDeleted),
            runplane::control::formatLocalTime(r.rollupCutoffNs).c_str(),
            static_cast<long long>(r.rollupsDeleted),
            r.dryRun ? "; nothing was changed"
                     : (" in " + std::to_string(r.transactions) + " transactions").c_str());
        if (!r.dryRun) {
            std::printf("file %s -> %s (%s freed)%s\n",
                        formatBytes(static_cast<double>(r.bytesBefore)).c_str(),
                        formatBytes(static_cast<double>(r.bytesAfter)).c_str(),
                        formatBytes(static_cast<double>(r.bytesBefore - r.bytesAfter)).c_str(),
                        r.freeBytesAfter > 0
                            ? ("; " + formatBytes(static_cast<double>(r.freeBytesAfter)) +
                               " of free pages stay inside the file (--vacuum returns them)")
                                  .c_str()
                            : "");
        }
    }
    context.exitCode = 0;
}

void runPin(const RetentionOptions& options, bool pinned, CliContext& context) {
    auto history = openExisting(options, context);
    if (!history) {
        return;
    }
    if (runplane::Status s = history->setPinned(db::RunId{options.runId}, pinned); !s.ok()) {
        std::cerr << "runplanectl history " << (pinned ? "pin" : "unpin") << ": " << s.error()
                  << "\n";
        context.exitCode = 1;
        return;
    }
    std::printf("run %s %s\n", options.runId.c_str(),
                pinned ? "pinned: retention keeps all of it" : "unpinned");
    context.exitCode = 0;
}

}  // namespace

void addRetentionCommands(CLI::App& group, CliContext& context) {
    auto addHistory = [](CLI::App* cmd, const std::shared_ptr<RetentionOptions>& o) {
        o->history = runplane::control::defaultHistoryPath();
        cmd->add_option("--history", o->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
    };
    const auto days = CLI::Range(1, runplane::db::kMaxRetentionDays);

    auto retention = std::make_shared<RetentionOptions>();
    auto* retentionCmd =
        group.add_subcommand("retention", "Show or set how long raw samples and rollups are kept");
    addHistory(retentionCmd, retention);
    retentionCmd->add_option("--raw-days", retention->rawDays, "Keep raw samples N days")
        ->check(days);
    retentionCmd->add_option("--rollup-days", retention->rollupDays, "Keep rollups M days")
        ->check(days);
    retentionCmd->add_flag("--json", retention->json, "Print JSON");
    retentionCmd->callback([retention, &context] { runRetention(*retention, context); });

    auto prune = std::make_shared<RetentionOptions>();
    auto* pruneCmd = group.add_subcommand(
        "prune", "Apply the retention policy now; report rows deleted and bytes freed");
    addHistory(pruneCmd, prune);
    pruneCmd->add_flag("--dry-run", prune->dryRun, "Count what would be deleted; change nothing");
    pruneCmd->add_flag("--vacuum", prune->vacuum,
                       "VACUUM afterwards (rewrites the file; writers wait meanwhile)");
    pruneCmd->add_flag("--trust-clock", prune->trustClock,
                       "Prune by this machine's clock even when it is ahead of the newest "
                       "sample stored by more than the raw horizon (an old history)");
    pruneCmd->add_flag("--json", prune->json, "Print JSON");
    pruneCmd->callback([prune, &context] { runPrune(*prune, context); });

    for (const bool pinned : {true, false}) {
        auto pin = std::make_shared<RetentionOptions>();
        auto* pinCmd =
            group.add_subcommand(pinned ? "pin" : "unpin",
                                 pinned ? "Keep everything of a run, whatever the retention policy"
                                        : "Let retention prune a run again");
        addHistory(pinCmd, pin);
        pinCmd->add_option("run", pin->runId, "Run id")->required();
        pinCmd->callback([pin, pinned, &context] { runPin(*pin, pinned, context); });
    }
}

}  // namespace runplane::cli
