// runplanectl history ...: read the run history (series, points with min/max-preserving
// decimation, events, nodes) as tables or JSON.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>

#include "backend/cli/command_registry.h"
#include "backend/cli/history_retention.h"
#include "backend/cli/history_sql.h"
#include "backend/control/history_location.h"
#include "backend/control/text_format.h"
#include "db/history/history.h"

namespace {

using nlohmann::json;
using runplane::db::History;

struct HistoryOptions {
    std::string history;
    bool json = false;
    std::string node;
    std::string run;
    bool nodeLevel = false;
    std::string name;
    std::string kind;
    std::int64_t seriesId = 0;
    std::int64_t fromNs = std::numeric_limits<std::int64_t>::min();
    std::int64_t toNs = std::numeric_limits<std::int64_t>::max();
    int buckets = 2000;
    int limit = 1000;
};

std::unique_ptr<History> openHistory(const HistoryOptions& options,
                                     runplane::cli::CliContext& context) {
    std::error_code ec;
    if (!std::filesystem::exists(options.history, ec)) {
        std::cerr << "runplanectl history: " << options.history << ": no such history file\n";
        context.exitCode = 2;
        return nullptr;
    }
    runplane::db::OpenOptions open;
    open.readOnly = true;
    auto history = History::open(options.history, open);
    if (!history.ok()) {
        std::cerr << "runplanectl history: " << history.error() << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    return std::move(*history);
}

template <typename T>
bool check(const runplane::Result<T>& result, runplane::cli::CliContext& context) {
    if (!result.ok()) {
        std::cerr << "runplanectl history: " << result.error() << "\n";
        context.exitCode = 2;
    }
    return result.ok();
}

void runSeries(const HistoryOptions& options, runplane::cli::CliContext& context) {
    auto history = openHistory(options, context);
    if (!history) {
        return;
    }
    runplane::db::SeriesFilter filter;
    filter.nodeId = runplane::NodeId{options.node};
    if (!options.run.empty() || options.nodeLevel) {
        filter.runId = runplane::RunId{options.run};
    }
    filter.name = options.name;
    auto series = history->listSeries(filter);
    if (!check(series, context)) {
        return;
    }
    json out = json::array();
    for (const auto& s : *series) {
        out.push_back({{"id", s.id},
                       {"node_id", s.nodeId.value()},
                       {"run_id", s.runId.value()},
                       {"name", s.name},
                       {"unit", s.unit},
                       {"count", s.count},
                       {"first_ns", s.firstNs},
                       {"last_ns", s.lastNs}});
        if (!options.json) {
            std::printf("%6lld  %-24s %-20s %-32s %8lld  %s .. %s\n", static_cast<long long>(s.id),
                        s.nodeId.value().c_str(), s.runId.empty() ? "-" : s.runId.value().c_str(),
                        s.name.c_str(), static_cast<long long>(s.count),
                        runplane::control::formatLocalTime(s.firstNs).c_str(),
                        runplane::control::formatLocalTime(s.lastNs).c_str());
        }
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
    }
}

void runPoints(const HistoryOptions& options, runplane::cli::CliContext& context) {
    auto history = openHistory(options, context);
    if (!history) {
        return;
    }
    std::int64_t id = options.seriesId;
    if (id == 0) {
        auto found = history->findSeries(runplane::NodeId{options.node},
                                         runplane::RunId{options.run}, options.name);
        if (!check(found, context)) {
            return;
        }
        if (!*found) {
            std::cerr << "runplanectl history points: no series '" << options.name << "' for node '"
                      << options.node << "'"
                      << (options.run.empty() ? "" : " run '" + options.run + "'") << " in "
                      << options.history << "\n";
            context.exitCode = 1;
            return;
        }
        id = **found;
    }
    auto points = history->querySeries({id, options.fromNs, options.toNs, options.buckets});
    if (!check(points, context)) {
        return;
    }
    if (options.json) {
        json out = {{"series_id", id},
                    {"decimated", points->decimated},
                    {"source_count", points->sourceCount},
                    {"points", json::array()}};
        for (const auto& p : points->points) {
            out["points"].push_back({{"t_ns", p.tNs},
                                     {"value", p.value},
                                     {"min", p.min},
                                     {"max", p.max},
                                     {"step", p.step}});
        }
        std::cout << out.dump() << "\n";
        return;
    }
    std::printf("# series %lld: %zu points of %lld samples%s\n", static_cast<long long>(id),
                points->points.size(), static_cast<long long>(points->sourceCount),
                points->decimated ? " (min/max-preserving decimation)" : "");
    for (const auto& p : points->points) {
        std::printf("%lld\t%.17g\t%.17g\t%.17g\t%lld\n", static_cast<long long>(p.tNs), p.value,
                    p.min, p.max, static_cast<long long>(p.step));
    }
}

void runEvents(const HistoryOptions& options, runplane::cli::CliContext& context) {
    auto history = openHistory(options, context);
    if (!history) {
        return;
    }
    runplane::db::EventFilter filter;
    filter.nodeId = runplane::NodeId{options.node};
    if (!options.run.empty()) {
        filter.runId = runplane::RunId{options.run};
    }
    filter.kind = options.kind;
    filter.t0Ns = options.fromNs;
    filter.t1Ns = options.toNs;
    filter.limit = options.limit;
    auto events = history->listEvents(filter);
    if (!check(events, context)) {
        return;
    }
    json out = json::array();
    for (const auto& e : *events) {
        json j = {{"node_id", e.nodeId.value()}, {"t_ns", e.tNs},
                  {"run_id", e.runId.value()},   {"kind", e.kind},
                  {"message", e.message},        {"attrs", json(e.attrs)}};
        j["seq"] = e.seq ? json(*e.seq) : json(nullptr);
        out.push_back(std::move(j));
        if (!options.json) {
            std::printf("%s  %-20s %-14s %s\n", runplane::control::formatLocalTime(e.tNs).c_str(),
                        e.nodeId.value().c_str(), e.kind.c_str(), e.message.c_str());
        }
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
    }
}

void runNodesList(const HistoryOptions& options, runplane::cli::CliContext& context) {
    auto history = openHistory(options, context);
    if (!history) {
        return;
    }
    auto nodes = history->listNodes();
    if (!check(nodes, context)) {
        return;
    }
    json out = json::array();
    for (const auto& n : *nodes) {
        out.push_back({{"node_id", n.nodeId.value()},
                       {"address", n.address},
                       {"hostname", n.hostname},
                       {"last_seen_ns", n.lastSeenNs},
                       {"info", json::parse(n.infoJson, nullptr, false)}});
        if (!options.json) {
            std::printf("%-36s %-22s %-20s %s\n", n.nodeId.value().c_str(), n.address.c_str(),
                        n.hostname.c_str(),
                        runplane::control::formatLocalTime(n.lastSeenNs).c_str());
        }
    }
    if (options.json) {
        std::cout << out.dump(2) << "\n";
    }
}

const bool kHistoryGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto* group = app.add_subcommand(
            "history", "Read the run history (series, points, events); retention (prune, pin)");
        group->require_subcommand(1);
        auto addCommon = [](CLI::App* cmd, const std::shared_ptr<HistoryOptions>& o) {
            o->history = runplane::control::defaultHistoryPath();
            cmd->add_option("--history", o->history, "History file ($RUNPLANE_HISTORY)")
                ->capture_default_str();
            cmd->add_flag("--json", o->json, "Print JSON");
        };

        auto series = std::make_shared<HistoryOptions>();
        auto* seriesCmd = group->add_subcommand("series", "List series with sample counts");
        addCommon(seriesCmd, series);
        seriesCmd->add_option("--node", series->node, "Only this node id");
        seriesCmd->add_option("--run", series->run, "Only this run id");
        seriesCmd->add_flag("--node-level", series->nodeLevel, "Only node-level series (no run)");
        seriesCmd->add_option("--name", series->name, "Exact name, or a prefix ending in *");
        seriesCmd->callback([series, &context] { runSeries(*series, context); });

        auto points = std::make_shared<HistoryOptions>();
        auto* pointsCmd = group->add_subcommand(
            "points", "Samples of one series in a time range, min/max-preserving decimation");
        addCommon(pointsCmd, points);
        pointsCmd->add_option("--id", points->seriesId, "Series id (from `history series`)");
        pointsCmd->add_option("--node", points->node, "Node id (with --name)");
        pointsCmd->add_option("--run", points->run, "Run id (with --name; empty: node-level)");
        pointsCmd->add_option("--name", points->name, "Series name (with --node)");
        pointsCmd->add_option("--from-ns", points->fromNs, "Range start, Unix ns");
        pointsCmd->add_option("--to-ns", points->toNs, "Range end, Unix ns (inclusive)");
        pointsCmd->add_option("--buckets", points->buckets, "At most this many buckets")
            ->capture_default_str()
            ->check(CLI::Range(2, 1'000'000));
        pointsCmd->callback([points, &context] { runPoints(*points, context); });

        auto events = std::make_shared<HistoryOptions>();
        auto* eventsCmd = group->add_subcommand("events", "Events (phases, alarms, gaps, exits)");
        addCommon(eventsCmd, events);
        eventsCmd->add_option("--node", events->node, "Only this node id");
        eventsCmd->add_option("--run", events->run, "Only this run id");
        eventsCmd->add_option("--kind", events->kind, "Only this kind (gap, phase, stall, ...)");
        eventsCmd->add_option("--from-ns", events->fromNs, "Range start, Unix ns");
        eventsCmd->add_option("--to-ns", events->toNs, "Range end, Unix ns (inclusive)");
        eventsCmd->add_option("--limit", events->limit, "At most this many")->capture_default_str();
        eventsCmd->callback([events, &context] { runEvents(*events, context); });

        auto nodes = std::make_shared<HistoryOptions>();
        auto* nodesCmd = group->add_subcommand("nodes", "Nodes the history has seen");
        addCommon(nodesCmd, nodes);
        nodesCmd->callback([nodes, &context] { runNodesList(*nodes, context); });

        runplane::cli::addRetentionCommands(*group, context);
        runplane::cli::addSqlCommand(*group, context);
    });

}  // namespace
