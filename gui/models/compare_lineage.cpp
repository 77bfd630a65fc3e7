#include "gui/models/compare_lineage.h"

#include <algorithm>
#include <limits>
#include <map>

#include "db/history/history.h"
#include "db/history/run_lineage.h"
#include "gui/models/compare_data.h"
#include "gui/models/history_queries.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {

namespace {

std::int64_t firstStep(const PointSeries& s) {
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    for (const double st : s.step) {
        if (st >= 0) {
            first = std::min(first, static_cast<std::int64_t>(st));
        }
    }
    return first;
}

}  // namespace

std::size_t prependBefore(PointSeries& child, const PointSeries& parent, std::int64_t cutoff) {
    PointSeries head;
    for (std::size_t i = 0; i < parent.t.size(); ++i) {
        const double st = i < parent.step.size() ? parent.step[i] : -1;
        if (st < 0 || static_cast<std::int64_t>(st) >= cutoff) {
            continue;
        }
        head.t.push_back(parent.t[i]);
        head.value.push_back(parent.value[i]);
        head.min.push_back(i < parent.min.size() ? parent.min[i] : parent.value[i]);
        head.max.push_back(i < parent.max.size() ? parent.max[i] : parent.value[i]);
        head.step.push_back(st);
    }
    const std::size_t n = head.t.size();
    if (n == 0) {
        return 0;
    }
    auto join = [](std::vector<double>& a, std::vector<double>& b) {
        a.insert(a.end(), b.begin(), b.end());
        b.swap(a);
    };
    join(head.t, child.t);
    join(head.value, child.value);
    join(head.min, child.min);
    join(head.max, child.max);
    // A child's series without steps has none to keep in step; give it -1s first.
    child.step.resize(child.t.size() - n, -1);
    join(head.step, child.step);
    child.sourceCount += static_cast<std::int64_t>(n);
    return n;
}

Status applyLineage(db::History& history, CompareRun& run) {
    auto chain = db::lineageChain(history, RunId{run.run.id.toStdString()});
    if (!chain.ok()) {
        return chain.failure();
    }
    if (chain->empty()) {
        return {};
    }
    // Per series: the cutoff below which the next ancestor's points go in front.
    std::vector<std::int64_t> cutoff;
    for (const PointSeries& s : run.metrics) {
        cutoff.push_back(firstStep(s));
    }
    for (const db::History::RunParent& link : *chain) {
        run.lineage.push_back(
            LineageMark{qs(link.runId), qs(link.parentId), qs(link.kind), link.step});
        db::SeriesFilter f;
        f.runId = RunId{link.parentId};
        auto series = history.listSeries(f);
        if (!series.ok()) {
            return series.failure();
        }
        std::map<std::string, const db::SeriesInfo*> byName;
        for (const db::SeriesInfo& info : *series) {
            byName.emplace(info.name, &info);
        }
        for (std::size_t i = 0; i < run.metrics.size(); ++i) {
            PointSeries& s = run.metrics[i];
            if (cutoff[i] == std::numeric_limits<std::int64_t>::max()) {
                continue;  // no stepped points: nothing to continue
            }
            const std::int64_t limit =
                link.step >= 0 ? std::min(cutoff[i], link.step + 1) : cutoff[i];
            const auto it = byName.find(s.name.toStdString());
            if (it == byName.end()) {
                continue;
            }
            auto parent = loadSeries(history, *it->second, 0, 0, 100000);
            if (!parent.ok()) {
                return parent.failure();
            }
            prependBefore(s, *parent, limit);
            cutoff[i] = std::min(limit, firstStep(s));
        }
    }
    return {};
}

}  // namespace runplane::gui
