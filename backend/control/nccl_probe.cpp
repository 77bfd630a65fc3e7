#include "backend/control/nccl_probe.h"

#include <chrono>
#include <future>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "db/history/history.h"

namespace runplane::control {
namespace {

using clock::unixNowNs;

void runOne(NodeProbe& node, const NcclProbeSpec& spec, const NodeClientOptions& options,
            std::chrono::seconds timeout) {
    auto client = NodeClient::create(node.address, options);
    if (!client.ok()) {
        node.error = client.error();
        return;
    }
    auto report = (*client)->probeNccl(spec, timeout);
    if (!report.ok()) {
        node.error = report.error();
        return;
    }
    node.report = std::move(*report);
    if (node.report.rows.empty() && node.error.empty()) {
        node.error = node.report.error.empty() ? node.report.verdict : node.report.error;
    }
}

}  // namespace

bool ClusterProbe::measured() const {
    if (!error.empty() || nodes.empty()) {
        return false;
    }
    for (const auto& n : nodes) {
        if (n.report.rows.empty()) {
            return false;
        }
        for (const auto& r : n.report.rows) {
            if (!r.correct) {
                return false;
            }
        }
    }
    return true;
}

ClusterProbe probeNcclAcross(const std::vector<std::string>& addresses, const NcclProbeSpec& spec,
                             const NodeClientOptions& options, std::chrono::seconds timeout) {
    ClusterProbe out;
    for (const auto& a : addresses) {
        NodeProbe n;
        n.address = a;
        out.nodes.push_back(std::move(n));
    }
    // Inventory first: node ids for the history, GPU counts for the rank layout.
    for (auto& n : out.nodes) {
        auto client = NodeClient::create(n.address, options);
        auto info = client.ok() ? (*client)->getNode() : Result<NodeSummary>(Error{client.error()});
        if (!info.ok()) {
            n.error = info.error();
            continue;
        }
        n.reachable = true;
        n.nodeId = info->nodeId.value();
        n.gpus = static_cast<std::uint32_t>(info->gpus.size());
    }
    if (out.nodes.size() == 1) {
        if (out.nodes[0].reachable) {
            runOne(out.nodes[0], spec, options, timeout);
        }
        return out;
    }
    for (const auto& n : out.nodes) {
        if (!n.reachable) {
            out.error = "the NCCL world needs every node: " + n.error;
            return out;
        }
        if (n.gpus == 0) {
            out.error = n.address + " reports no GPU, so it cannot hold a rank";
            return out;
        }
    }
    std::uint32_t next = 0;
    for (auto& n : out.nodes) {
        n.firstRank = next;
        next += n.gpus;
    }
    out.worldSize = next;
    auto head = NodeClient::create(out.nodes[0].address, options);
    auto id = head.ok() ? (*head)->ncclUniqueId() : Result<std::string>(Error{head.error()});
    if (!id.ok()) {
        out.error = "no ncclUniqueId from rank 0's daemon: " + id.error();
        return out;
    }
    // Every rank must join for init to finish, so all daemons are asked at once.
    std::vector<std::future<void>> calls;
    for (auto& n : out.nodes) {
        NcclProbeSpec s = spec;
        s.uniqueId = *id;
        s.worldSize = out.worldSize;
        s.firstRank = n.firstRank;
        calls.push_back(std::async(std::launch::async,
                                   [&n, s, &options, timeout] { runOne(n, s, options, timeout); }));
    }
    for (auto& c : calls) {
        c.get();
    }
    return out;
}

Status recordNcclProbe(const std::string& historyPath, const std::string& runId,
                       const ClusterProbe& probe) {
    auto history = db::History::open(historyPath);
    if (!history.ok()) {
        return Error{history.error()};
    }
    const std::int64_t t = unixNowNs();
    const RunId id{runId};
    for (const auto& n : probe.nodes) {
        db::IngestBatch batch;
        batch.nodeId = NodeId{n.nodeId.empty() ? n.address : n.nodeId};
        db::IngestEvent summary;
        summary.tNs = t;
        summary.runId = id;
        summary.kind = "nccl_probe";
        summary.message = !n.report.verdict.empty() ? n.report.verdict
                          : !n.error.empty()        ? n.error
                                                    : probe.error;
        // Numbers stay numbers, the NCCL environment and the probe's own report nested objects.
        summary.attrs = {{"address", n.address},
                         {"nccl_version", n.report.ncclVersion},
                         {"library", n.report.libraryPath},
                         {"ranks", n.report.ranks},
                         {"world_size", probe.worldSize},
                         {"first_rank", n.firstRank},
                         {"nccl_env", n.report.ncclEnv},
                         {"error", n.error.empty() ? probe.error : n.error}};
        if (!n.report.rawJson.empty()) {
            auto raw = nlohmann::json::parse(n.report.rawJson, nullptr, false);
            summary.attrs["report"] = raw.is_discarded() ? nlohmann::json(n.report.rawJson) : raw;
        }
        batch.events.push_back(std::move(summary));
        std::int64_t rowT = t + 1;
        for (const auto& r : n.report.rows) {
            db::IngestEvent row;
            row.tNs = rowT++;
            row.runId = id;
            row.kind = "info";
            row.message = "nccl " + r.collective + " " + std::to_string(r.bytes) + " B: busbw " +
                          std::to_string(r.busbwGbps) + " GB/s";
            // Strings, as the daemon's event attrs are (the Runs page reads them so).
            row.attrs = {{"collective", r.collective},
                         {"bytes", std::to_string(r.bytes)},
                         {"busbw_gbps", std::to_string(r.busbwGbps)},
                         {"algbw_gbps", std::to_string(r.algbwGbps)},
                         {"time_us_p50", std::to_string(r.timeUsP50)},
                         {"time_us_p95", std::to_string(r.timeUsP95)},
                         {"correct", r.correct ? "true" : "false"},
                         {"nccl_version", n.report.ncclVersion}};
            batch.events.push_back(std::move(row));
        }
        if (auto stored = (*history)->ingest(batch); !stored.ok()) {
            return Error{stored.error()};
        }
    }
    return {};
}

}  // namespace runplane::control
