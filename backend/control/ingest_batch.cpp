#include "backend/control/ingest_batch.h"

#include <algorithm>
#include <vector>

#include "backend/control/node_convert.h"
#include "common/telemetry/series.h"

namespace runplane::control {

namespace {

std::uint64_t parseSeq(const std::map<std::string, std::string>& attrs, const char* key) {
    auto it = attrs.find(key);
    if (it == attrs.end()) {
        return 0;
    }
    try {
        return std::stoull(it->second);
    } catch (...) {
        return 0;
    }
}

struct Range {
    std::uint64_t first;
    std::uint64_t last;
};

}  // namespace

std::optional<db::RunState> runStateOf(const EventInfo& event) {
    if (!event.runState) {
        return std::nullopt;
    }
    return telemetry::historyState(*event.runState);
}

std::optional<db::RunState> runStateFromAttrs(const db::EventAttrs& attrs) {
    auto it = attrs.find(telemetry::attr::kState);
    if (it == attrs.end() || !it->second.is_string()) {
        return std::nullopt;
    }
    if (auto reported = runStateFromName(it->second.get<std::string>())) {
        return telemetry::historyState(*reported);
    }
    return std::nullopt;
}

BatchPlan planBatch(const NodeId& nodeId, const TelemetryBatchInfo& batch, std::uint64_t expected,
                    std::int64_t nowNs) {
    BatchPlan plan;
    plan.batch.nodeId = nodeId;
    std::vector<const TelemetryRecordInfo*> records;
    records.reserve(batch.records.size());
    for (const auto& record : batch.records) {
        records.push_back(&record);
    }
    std::stable_sort(records.begin(), records.end(),
                     [](const auto* a, const auto* b) { return a->seq < b->seq; });

    // Ranges the daemon itself declared lost.
    std::vector<Range> declared;
    for (const auto* record : records) {
        if (record->isEvent && record->event.kind == EventKindInfo::Gap) {
            const std::uint64_t first = parseSeq(record->event.attrs, telemetry::attr::kFirstSeq);
            const std::uint64_t last = parseSeq(record->event.attrs, telemetry::attr::kLastSeq);
            if (first > 0 && last >= first) {
                declared.push_back({first, last});
            }
        }
    }
    auto addGap = [&](std::uint64_t first, std::uint64_t last, std::int64_t tNs,
                      const std::string& reason) {
        // Subtract what the daemon declared, report the rest.
        std::vector<Range> rest{{first, last}};
        for (const Range& d : declared) {
            std::vector<Range> next;
            for (const Range& r : rest) {
                if (d.last < r.first || d.first > r.last) {
                    next.push_back(r);
                    continue;
                }
                if (d.first > r.first) {
                    next.push_back({r.first, d.first - 1});
                }
                if (d.last < r.last) {
                    next.push_back({d.last + 1, r.last});
                }
            }
            rest = std::move(next);
        }
        for (const Range& r : rest) {
            db::IngestEvent event;
            event.seq = 0;
            event.tNs = tNs;
            event.kind = toString(EventKindInfo::Gap);
            const std::uint64_t lost = r.last - r.first + 1;
            event.message = "telemetry records " + std::to_string(r.first) + ".." +
                            std::to_string(r.last) + " (" + std::to_string(lost) +
                            ") are missing: " + reason;
            event.attrs = {{telemetry::attr::kFirstSeq, std::to_string(r.first)},
                           {telemetry::attr::kLastSeq, std::to_string(r.last)},
                           {"source", "controller"},
                           {"reason", reason}};
            plan.batch.events.push_back(std::move(event));
            ++plan.gaps;
        }
    };

    std::uint64_t next = expected;
    // The daemon no longer holds what we asked for.
    if (next > 0 && batch.oldestKeptSeq > next) {
        const std::int64_t t = records.empty() ? nowNs : records.front()->tNs;
        addGap(next, batch.oldestKeptSeq - 1, t,
               "the daemon's spool no longer holds them (oldest kept " +
                   std::to_string(batch.oldestKeptSeq) + ")");
        next = batch.oldestKeptSeq;
    }
    for (const auto* record : records) {
        if (next > 0 && record->seq < next) {
            continue;  // already accounted for
        }
        if (next > 0 && record->seq > next) {
            addGap(next, record->seq - 1, record->tNs, "not delivered by the daemon");
        }
        next = record->seq + 1;
        if (record->isEvent) {
            db::IngestEvent event;
            event.seq = record->seq;
            event.tNs = record->tNs;
            event.runId = RunId{record->runId};
            event.kind = toString(record->event.kind);
            event.message = record->event.message;
            event.attrs = db::eventAttrs(record->event.attrs);
            plan.batch.events.push_back(std::move(event));
        } else {
            db::IngestSample sample;
            sample.seq = record->seq;
            sample.tNs = record->tNs;
            sample.runId = RunId{record->runId};
            sample.series = record->sample.series;
            sample.unit = telemetry::toString(sampleUnit(record->sample));
            sample.value = record->sample.value;
            sample.min = record->sample.min;
            sample.max = record->sample.max;
            sample.step = record->sample.step;
            plan.batch.samples.push_back(std::move(sample));
        }
    }
    plan.nextExpected = next;
    plan.batch.throughSeq = next > 0 ? next - 1 : 0;
    return plan;
}

}  // namespace runplane::control
