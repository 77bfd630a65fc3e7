// The controller's ingest of TelemetryBatch messages into the history, as TelemetryIngestor does
// it: decode, planBatch against the node's cursor (gaps, duplicates), History::ingest, run-state
// updates; through the public History API only. Input: up to 8 batches, each a long string of
// protobuf bytes. Each input gets a node id of its own, so inputs do not see each other's cursor;
// the history file is started afresh every 1000 inputs to stay small.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "backend/control/ingest_batch.h"
#include "backend/control/node_convert.h"
#include "db/history/history.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane;

namespace {

struct State {
    std::string path;
    std::unique_ptr<db::History> history;
    std::uint64_t inputs = 0;
};

State& state() {
    static State s = [] {
        State st;
        st.path = runplane::fuzz::scratchDir("history") + "/history.sqlite";
        return st;
    }();
    return s;
}

db::History& history() {
    State& s = state();
    if (s.history == nullptr || s.inputs % 1000 == 0) {
        s.history.reset();
        for (const char* suffix : {"", "-wal", "-shm", "-lock"}) {
            std::filesystem::remove(s.path + suffix);
        }
        auto opened = db::History::open(s.path);
        if (!opened.ok()) {
            std::abort();  // a fresh file on a local disk must open
        }
        s.history = std::move(*opened);
    }
    return *s.history;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    db::History& h = history();
    const db::NodeId nodeId{"fuzz-node-" + std::to_string(state().inputs++)};
    fuzz::ByteReader in(data, size);
    for (int n = 0; n < 8 && !in.empty(); ++n) {
        v1::TelemetryBatch wire;
        if (!wire.ParseFromString(in.longString())) {
            continue;
        }
        control::TelemetryBatchInfo batch = control::fromProto(wire);
        auto cursor = h.ingestCursor(nodeId);
        const std::uint64_t expected = cursor.ok() && *cursor > 0 ? *cursor + 1 : 0;
        control::BatchPlan plan =
            control::planBatch(nodeId, batch, expected, 1'700'000'000'000'000'000);
        plan.batch.incarnation = batch.spoolIncarnation;
        auto stored = h.ingest(plan.batch);
        if (!stored.ok()) {
            continue;
        }
        for (const auto& record : batch.records) {
            if (record.isEvent && !record.runId.empty()) {
                if (auto st = control::runStateOf(record.event)) {
                    (void)h.updateRunState(db::RunId{record.runId}, *st, record.tNs,
                                           record.event.message);
                }
            }
        }
    }
    db::SeriesFilter filter;
    filter.nodeId = nodeId;
    // The reads that add the staged rows (schema 8) to the chunks: extent, raw and cells.
    auto series = h.listSeries(filter);
    if (series.ok()) {
        for (const db::SeriesInfo& info : *series) {
            (void)h.querySeries(db::SeriesQuery{info.id, std::numeric_limits<std::int64_t>::min(),
                                                std::numeric_limits<std::int64_t>::max(), 16});
        }
    }
    return 0;
}
