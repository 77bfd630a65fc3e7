#include "bench/load/load_stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "db/history/history.h"

namespace runplane::bench {

namespace {

constexpr std::size_t kLagBins = 600'000;  // 1 ms bins up to 10 minutes

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
    return v[std::min(k, v.size() - 1)];
}

nlohmann::json spread(const std::vector<double>& v) {
    return {{"p50", percentile(v, 0.5)},
            {"p99", percentile(v, 0.99)},
            {"max", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())},
            {"n", v.size()}};
}

// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    if (x.size() < 2) {
        return 0;
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    const double d = n * sxx - sx * sx;
    return d == 0 ? 0 : (n * sxy - sx * sy) / d;
}

std::vector<double> field(const std::vector<nlohmann::json>& lines, const char* name) {
    std::vector<double> out;
    for (const auto& line : lines) {
        if (line.contains("gui") && line["gui"].contains(name)) {
            out.push_back(line["gui"][name].get<double>());
        }
    }
    return out;
}

// The Runs paints over the redraw goal, and what was beside each: the fixed reference work
// (controller_child.cpp: timedReference) just before or after it at over twice its median CPU
// time (the host ran the thread slower), the hypervisor's steal counter moving on its CPU, or
// neither (the paint itself took longer).
// `referenceBefore` and `referenceAfter`: the integer chain's CPU times, as read for the report.
nlohmann::json slowRunsPaints(const std::vector<nlohmann::json>& lines,
                              const std::vector<double>& referenceBefore,
                              const std::vector<double>& referenceAfter, double overMs) {
    std::vector<double> reference = referenceBefore;
    reference.insert(reference.end(), referenceAfter.begin(), referenceAfter.end());
    const double slowReference = 2 * percentile(reference, 0.5);
    int over = 0, referenceSlowed = 0, steal = 0, neither = 0;
    for (const auto& line : lines) {
        if (!line.contains("gui") || !line["gui"].contains("runs_ref_alu_before_cpu_ms")) {
            continue;
        }
        const auto& g = line["gui"];
        if (g["runs_paint_ms"].get<double>() <= overMs) {
            continue;
        }
        ++over;
        const bool slowed = std::max(g["runs_ref_alu_before_cpu_ms"].get<double>(),
                                     g["runs_ref_alu_after_cpu_ms"].get<double>()) > slowReference;
        const bool stolen = g["runs_paint_steal_ms"].get<double>() > 0;
        referenceSlowed += slowed ? 1 : 0;
        steal += stolen ? 1 : 0;
        neither += !slowed && !stolen ? 1 : 0;
    }
    return {{"over_ms", overMs},
            {"count", over},
            {"reference_over_twice_its_median", referenceSlowed},
            {"steal_on_its_cpu", steal},
            {"neither", neither}};
}
}  // namespace

LoadStats::LoadStats(LoadParams params)
    : m_params(std::move(params)), m_lagHistogram(kLagBins + 1, 0) {}

void LoadStats::addLags(const std::vector<float>& lags) {
    for (float lag : lags) {
        const auto bin = static_cast<std::size_t>(std::max(0.0F, lag));
        ++m_lagHistogram[std::min(bin, kLagBins)];
        m_lagMax = std::max(m_lagMax, lag);
    }
    m_lagCount += lags.size();
}

double LoadStats::lagPercentile(double p) const {
    if (m_lagCount == 0) {
        return 0;
    }
    const auto target = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(m_lagCount)));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < m_lagHistogram.size(); ++i) {
        seen += m_lagHistogram[i];
        if (seen >= target) {
            return static_cast<double>(i + 1);  // upper edge of the 1 ms bin
        }
    }
    return static_cast<double>(kLagBins);
}

void LoadStats::addSecond(int second, LagWindow window, long rssKiB, std::vector<double> readerMs,
                          std::vector<nlohmann::json> gui) {
    std::vector<double> lags(window.lagMs.begin(), window.lagMs.end());
    addLags(window.lagMs);
    m_stored += window.acked;
    m_generated += window.generated;
    m_backlogMax = std::max(m_backlogMax, window.backlog);
    m_backlogEnd = window.backlog;
    const double rss = static_cast<double>(rssKiB) / 1024.0;
    m_rssMiB.push_back(rss);
    nlohmann::json row = {{"t", second},
                          {"lag_p50_ms", percentile(lags, 0.5)},
                          {"lag_p99_ms", percentile(lags, 0.99)},
                          {"stored", window.acked},
                          {"generated", window.generated},
                          {"backlog", window.backlog},
                          {"rss_mib", rss},
                          {"reader_ms", readerMs.empty() ? -1.0 : readerMs.back()}};
    if (!gui.empty() && gui.back().contains("gui")) {
        row["gui"] = gui.back()["gui"];
    }
    if (!gui.empty() && gui.back().contains("lib")) {
        row["lib"] = gui.back()["lib"];
    }
    m_seconds.push_back(std::move(row));
    m_reader.insert(m_reader.end(), readerMs.begin(), readerMs.end());
    m_gui.insert(m_gui.end(), gui.begin(), gui.end());
}

void LoadStats::addDrain(LagWindow window, std::vector<double> readerMs,
                         std::vector<nlohmann::json> gui) {
    addLags(window.lagMs);
    m_stored += window.acked;
    m_reader.insert(m_reader.end(), readerMs.begin(), readerMs.end());
    m_gui.insert(m_gui.end(), gui.begin(), gui.end());
}

nlohmann::json LoadStats::report(bool drained, double drainSeconds, long rssEndKiB, int childExit,
                                 const Verification& verified, const std::vector<int>& watchCalls,
                                 std::uint64_t readerFailures,
                                 const std::string& readerError) const {
    // RSS slope after a warm-up of 10 % of the run (at least 1 s): connection setup and the
    // first caches are not growth.
    const std::size_t skip = std::max<std::size_t>(1, m_rssMiB.size() / 10);
    std::vector<double> xs, ys;
    for (std::size_t i = skip; i < m_rssMiB.size(); ++i) {
        xs.push_back(static_cast<double>(i + 1) / 60.0);
        ys.push_back(m_rssMiB[i]);
    }
    std::vector<double> perMinuteP99;
    nlohmann::json minutes = nlohmann::json::array();
    for (std::size_t m = 0; m * 60 < m_seconds.size(); ++m) {
        std::vector<double> p99, stored, rss;
        for (std::size_t i = m * 60; i < std::min(m_seconds.size(), (m + 1) * 60); ++i) {
            p99.push_back(m_seconds[i]["lag_p99_ms"].get<double>());
            stored.push_back(m_seconds[i]["stored"].get<double>());
            rss.push_back(m_seconds[i]["rss_mib"].get<double>());
        }
        double sum = 0;
        for (double s : stored) {
            sum += s;
        }
        minutes.push_back({{"minute", m + 1},
                           {"lag_p99_ms_worst_second", percentile(p99, 1.0)},
                           {"stored_per_s", sum / static_cast<double>(stored.size())},
                           {"rss_mib_end", rss.back()}});
    }
    int reconnects = 0;
    for (int calls : watchCalls) {
        reconnects += std::max(0, calls - 1);
    }
    const auto clusterPaint = field(m_gui, "cluster_paint_ms");
    const auto plotRedraw = field(m_gui, "cluster_plot_redraw_ms");
    const auto plotRedrawCpu = field(m_gui, "cluster_plot_redraw_cpu_ms");
    const auto clusterPaintCpu = field(m_gui, "cluster_paint_cpu_ms");
    const auto runsPaint = field(m_gui, "runs_paint_ms");
    const auto runsPaintCpu = field(m_gui, "runs_paint_cpu_ms");
    const auto clusterPaintQueued = field(m_gui, "cluster_paint_queued_ms");
    const auto runsPaintQueued = field(m_gui, "runs_paint_queued_ms");
    const auto clusterPaintFaults = field(m_gui, "cluster_paint_faults");
    const auto runsPaintFaults = field(m_gui, "runs_paint_faults");
    const auto clusterPaintSwitches = field(m_gui, "cluster_paint_switches");
    const auto runsPaintSwitches = field(m_gui, "runs_paint_switches");
    const auto stall = field(m_gui, "stall_max_ms");
    // The fixed reference work beside each Runs paint (controller_child.cpp: timedReference).
    const auto refAluBefore = field(m_gui, "runs_ref_alu_before_cpu_ms");
    const auto refAluAfter = field(m_gui, "runs_ref_alu_after_cpu_ms");
    const auto refMemBefore = field(m_gui, "runs_ref_mem_before_cpu_ms");
    const auto refMemAfter = field(m_gui, "runs_ref_mem_after_cpu_ms");
    // Steal on the paint's CPU, where it ended on the CPU it started on (-1 otherwise).
    auto known = [](std::vector<double> v) {
        std::erase_if(v, [](double x) { return x < 0; });
        return v;
    };
    const auto clusterPaintSteal = known(field(m_gui, "cluster_paint_steal_ms"));
    const auto runsPaintSteal = known(field(m_gui, "runs_paint_steal_ms"));
    nlohmann::json lastLib;
    for (const auto& line : m_gui) {
        if (line.contains("lib")) {
            lastLib = line["lib"];
        }
    }
    const double secs = static_cast<double>(std::max<std::size_t>(1, m_seconds.size()));
    const double genRate = static_cast<double>(m_params.nodes) * m_params.hz * m_params.series;
    return {
        {"bench", "bench_load (issue 20)"},
        {"command", "bench_load --nodes " + std::to_string(m_params.nodes) + " --hz " +
                        std::to_string(m_params.hz) + " --series " +
                        std::to_string(m_params.series) + " --seconds " +
                        std::to_string(m_params.seconds) + " --controller " + m_params.controller},
        {"target",
         {{"ingest_lag_p99_ms_below", 2000},
          {"gui_redraw_ms_below", 16},
          {"rss", "bounded and flat"},
          {"offered_samples_per_s", genRate}}},
        {"summary",
         {{"ingest_lag_ms",
           {{"p50", lagPercentile(0.5)},
            {"p99", lagPercentile(0.99)},
            {"max", m_lagMax},
            {"n", m_lagCount}}},
          {"generated_per_s", static_cast<double>(m_generated) / secs},
          {"stored_per_s", static_cast<double>(m_stored) / secs},
          {"backlog_records_max", m_backlogMax},
          {"backlog_records_at_end_of_load", m_backlogEnd},
          {"drained", drained},
          {"drain_s", drainSeconds},
          {"controller_rss_mib",
           {{"first", m_rssMiB.empty() ? 0.0 : m_rssMiB.front()},
            {"last", static_cast<double>(rssEndKiB) / 1024.0},
            {"max", m_rssMiB.empty() ? 0.0 : *std::max_element(m_rssMiB.begin(), m_rssMiB.end())},
            {"slope_mib_per_min_after_warmup", slope(xs, ys)}}},
          {"history_reader_ms", spread(m_reader)},
          {"history_reader_failures", readerFailures},
          {"history_reader_last_error", readerError},
          {"gui",
           {{"cluster_paint_ms", spread(clusterPaint)},
            {"cluster_paint_cpu_ms", spread(clusterPaintCpu)},
            {"cluster_plot_redraw_ms", spread(plotRedraw)},
            {"cluster_plot_redraw_cpu_ms", spread(plotRedrawCpu)},
            {"runs_paint_ms", spread(runsPaint)},
            {"runs_paint_cpu_ms", spread(runsPaintCpu)},
            {"cluster_paint_queued_ms", spread(clusterPaintQueued)},
            {"runs_paint_queued_ms", spread(runsPaintQueued)},
            {"cluster_paint_minor_faults", spread(clusterPaintFaults)},
            {"runs_paint_minor_faults", spread(runsPaintFaults)},
            {"cluster_paint_voluntary_switches", spread(clusterPaintSwitches)},
            {"runs_paint_voluntary_switches", spread(runsPaintSwitches)},
            {"cluster_paint_steal_ms", spread(clusterPaintSteal)},
            {"runs_paint_steal_ms", spread(runsPaintSteal)},
            {"runs_reference_alu_before_cpu_ms", spread(refAluBefore)},
            {"runs_reference_alu_after_cpu_ms", spread(refAluAfter)},
            {"runs_reference_mem_before_cpu_ms", spread(refMemBefore)},
            {"runs_reference_mem_after_cpu_ms", spread(refMemAfter)},
            {"runs_paints_over_goal", slowRunsPaints(m_gui, refAluBefore, refAluAfter, 16)},
            {"event_loop_stall_ms", spread(stall)},
            {"samples", m_gui.size()}}},
          {"watch_reconnects", reconnects},
          {"controller_last_status", lastLib},
          {"controller_exit", childExit},
          {"verify",
           {{"expected", verified.expected},
            {"stored", verified.stored},
            {"lost", verified.lost},
            {"duplicated", verified.duplicated},
            {"cursors_behind", verified.cursorsBehind},
            {"missing_below_ack", verified.missingBelowAck},
            {"not_stored_note",
             "lost = generated - stored; with drained = false it includes the "
             "backlog still in the spools when the controller was stopped"},
            {"seconds", verified.seconds},
            {"error", verified.error}}}}},
        {"per_minute", minutes},
        {"per_second", m_seconds}};
}

Verification verifyHistory(const std::string& historyPath, const std::vector<std::string>& nodeIds,
                           const std::vector<std::uint64_t>& generated,
                           const std::vector<std::uint64_t>& acked, int series,
                           const std::string& runId) {
    const auto begin = std::chrono::steady_clock::now();
    Verification v;
    auto opened = db::History::open(historyPath, db::OpenOptions{true, 5000});
    if (!opened) {
        v.error = opened.error();
        return v;
    }
    db::History& history = **opened;
    for (std::size_t n = 0; n < nodeIds.size(); ++n) {
        v.expected += generated[n];
        auto cursor = history.ingestCursor(db::NodeId{nodeIds[n]});
        if (!cursor) {
            v.error = cursor.error();
            return v;
        }
        v.cursorsBehind += *cursor != generated[n] ? 1 : 0;
        const std::uint64_t perSeries = generated[n] / static_cast<std::uint64_t>(series);
        std::uint64_t storedHere = 0;
        for (int s = 0; s < series; ++s) {
            const bool inRun = !runId.empty() && s >= 1 && s <= 4;
            auto id = history.findSeries(NodeId{nodeIds[n]}, inRun ? RunId{runId} : RunId(),
                                         SimCluster::seriesName(s));
            if (!id) {
                v.error = id.error();
                return v;
            }
            if (!*id) {
                continue;  // nothing stored: all lost
            }
            // Enough buckets that nothing is decimated (at most 4 x maxBuckets samples).
            db::SeriesQuery query;
            query.seriesId = **id;
            query.maxBuckets = static_cast<int>(perSeries / 4 + 16);
            auto points = history.querySeries(query);
            if (!points) {
                v.error = points.error();
                return v;
            }
            if (points->decimated) {
                // A history the controller's retention pruner has visited answers bucketed
                // (db/history: "always bucketed" past a prune horizon; a restarted controller
                // prunes at its start). Buckets narrower than the 1/hz sample spacing hold one
                // sample each, and sourceCount is every stored row in the range.
                query.maxBuckets = static_cast<int>(2 * perSeries + 16);
                points = history.querySeries(query);
                if (!points) {
                    v.error = points.error();
                    return v;
                }
            }
            std::set<std::int64_t> distinct;
            for (const auto& p : points->points) {
                distinct.insert(p.tNs);
            }
            const std::uint64_t rows = points->decimated
                                           ? static_cast<std::uint64_t>(points->sourceCount)
                                           : points->points.size();
            v.stored += distinct.size();
            storedHere += distinct.size();
            v.duplicated += rows > distinct.size() ? rows - distinct.size() : 0;
        }
        v.missingBelowAck += acked[n] > storedHere ? acked[n] - storedHere : 0;
    }
    v.lost = v.expected > v.stored ? v.expected - v.stored : 0;
    v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return v;
}

}  // namespace runplane::bench
