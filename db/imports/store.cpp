// An imported run written into the history (docs/imports.md, "In the history").
#include <algorithm>
#include <limits>

#include "db/imports/run_import.h"

namespace runplane::imports {
namespace {

/// Samples per ingest transaction: bounded memory whatever the run's size.
constexpr std::size_t kBatchSamples = 1u << 16;

/// The pseudo-node every imported sample belongs to; each run is its own incarnation.
const NodeId kImportNode{"import"};

std::uint64_t incarnationOf(const std::string& sha256Hex) {
    // 15 hex digits: a positive int64 whatever SQLite does with the high bit; never 0.
    const std::uint64_t v = std::stoull(sha256Hex.substr(16, 15), nullptr, 16);
    return v == 0 ? 1 : v;
}

}  // namespace

Result<StoreResult> storeImportedRun(db::History& history, const ImportedRun& run,
                                     std::int64_t nowNs) {
    if (run.contentSha256.size() < 32) {
        return Error{"imported run " + run.name + " has no content hash"};
    }
    StoreResult result;
    result.runId = importedRunId(run);
    result.seriesCount = run.series.size();
    auto existing = history.run(result.runId);
    if (!existing.ok()) {
        return existing.failure();
    }
    if (existing->has_value()) {
        result.alreadyPresent = true;
        return result;
    }
    std::int64_t t0 = std::numeric_limits<std::int64_t>::max();
    std::int64_t t1 = std::numeric_limits<std::int64_t>::min();
    const std::uint64_t incarnation = incarnationOf(run.contentSha256);
    db::IngestBatch batch;
    batch.nodeId = kImportNode;
    batch.incarnation = incarnation;
    std::uint64_t seq = 0;
    auto flush = [&]() -> Status {
        batch.throughSeq = seq;
        auto stored = history.ingest(batch);
        if (!stored.ok()) {
            return stored.failure();
        }
        result.samplesInserted += stored->samplesInserted;
        batch.samples.clear();
        batch.events.clear();
        return {};
    };
    batch.samples.reserve(std::min(kBatchSamples, run.pointCount()));
    for (const ImportedSeries& series : run.series) {
        for (const ImportedPoint& p : series.points) {
            db::IngestSample s;
            s.seq = ++seq;
            s.tNs = p.tNs;
            s.runId = result.runId;
            s.series = series.name;
            s.value = s.min = s.max = p.value;
            s.step = p.step;
            t0 = std::min(t0, p.tNs);
            t1 = std::max(t1, p.tNs);
            batch.samples.push_back(std::move(s));
            if (batch.samples.size() == kBatchSamples) {
                if (auto st = flush(); !st.ok()) {
                    return st.failure();
                }
            }
        }
    }
    if (t0 > t1) {
        t0 = t1 = nowNs;
    }
    nlohmann::json origin{{"format", run.format},
                          {"files", run.files},
                          {"content_sha256", run.contentSha256},
                          {"imported_ns", nowNs},
                          {"records", run.records},
                          {"points", run.pointCount()},
                          {"series", run.series.size()},
                          {"skipped_values", run.skippedValues},
                          {"stopped", run.stopped}};
    for (const auto& [k, v] : run.extra.items()) {
        origin[k] = v;
    }
    db::IngestEvent event;
    event.seq = ++seq;
    event.tNs = t1;
    event.runId = result.runId;
    event.kind = "import";
    event.message =
        "imported " + std::to_string(run.pointCount()) + " points of " +
        std::to_string(run.series.size()) + " series from " + run.format + " " +
        (run.files.size() == 1 ? run.files.front() : std::to_string(run.files.size()) + " files") +
        (run.stopped.empty() ? "" : "; " + run.stopped);
    event.attrs = db::EventAttrs{{"format", run.format},
                                 {"content_sha256", run.contentSha256},
                                 {"files", run.files},
                                 {"stopped", run.stopped}};
    batch.events.push_back(std::move(event));
    if (auto st = flush(); !st.ok()) {
        return st.failure();
    }

    db::RunRecord record;
    record.id = result.runId;
    record.name = run.name;
    record.provenanceJson = nlohmann::json{{"origin", origin}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);  // a path or config not UTF-8
    record.state = db::RunState::Finished;
    record.startedNs = t0;
    record.endedNs = t1;
    record.message = run.stopped.empty() ? "imported from " + run.format
                                         : "imported from " + run.format + " (partial)";
    if (auto st = history.upsertRun(record); !st.ok()) {
        return st.failure();
    }
    // Pinned: an import is usually older than the raw-sample horizon, and retention would
    // otherwise delete its samples at the next prune (docs/imports.md).
    if (auto st = history.setPinned(record.id, true); !st.ok()) {
        return st.failure();
    }
    return result;
}

}  // namespace runplane::imports
