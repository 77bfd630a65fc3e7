#include "gui/models/metric_views.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace runplane::gui {

namespace {
QString kindText(metrics::Kind kind) {
    const std::string_view k = metrics::kindName(kind);
    return QString::fromUtf8(k.data(), static_cast<qsizetype>(k.size()));
}
}  // namespace

void applyKindOverrides(std::vector<PointSeries>& series,
                        const std::vector<metrics::KindOverride>& overrides) {
    if (overrides.empty()) {
        return;
    }
    for (PointSeries& s : series) {
        const std::string name = s.name.toStdString();
        if (metrics::findOverride(name, overrides) != nullptr) {
            s.info = metrics::classify(name, s.unit.toStdString(), overrides);
        }
    }
}

metrics::MetricInfo metricInfo(const PointSeries& series) {
    if (series.info.has_value()) {
        return *series.info;
    }
    return metrics::classify(series.name.toStdString(), series.unit.toStdString());
}

bool isEvalScore(const QString& name, const QString& unit) {
    return name.startsWith(QLatin1String("eval/")) &&
           metrics::classify(name.toStdString(), unit.toStdString()).kind == metrics::Kind::Score;
}

QString bestText(const MetricValue& m, int precision) {
    if (!m.hasBest()) {
        return QStringLiteral("– (%1: no better direction)").arg(kindText(m.info.kind));
    }
    return QStringLiteral("%1 @ step %2").arg(m.best, 0, 'f', precision).arg(m.bestStep);
}

const MetricValue* primaryMetric(const std::vector<MetricValue>& values, const QString& preferred) {
    const MetricValue* first = nullptr;
    for (const MetricValue& m : values) {
        if (!preferred.isEmpty() && m.name == preferred) {
            return &m;
        }
        if (m.name.startsWith(QLatin1String("eval/")) && m.info.kind == metrics::Kind::Score &&
            (first == nullptr || m.name < first->name)) {
            first = &m;
        }
    }
    return first;
}

std::vector<const PointSeries*> evalScoreSeries(const std::vector<PointSeries>& series) {
    std::vector<const PointSeries*> out;
    for (const PointSeries& s : series) {
        // metricInfo: the recipe's override (PointSeries::info) when it has one.
        if (s.name.startsWith(QLatin1String("eval/")) &&
            metricInfo(s).kind == metrics::Kind::Score) {
            out.push_back(&s);
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const PointSeries* a, const PointSeries* b) { return a->name < b->name; });
    return out;
}

QStringList orderMetricNames(QStringList names, const std::map<QString, bool>& scoreKind,
                             const QString& primary) {
    names.removeDuplicates();
    std::sort(names.begin(), names.end());
    QStringList scores;
    QStringList rest;
    for (const QString& n : names) {
        if (n == primary) {
            continue;
        }
        const auto it = scoreKind.find(n);
        const bool score = it != scoreKind.end() ? it->second : isEvalScore(n);
        (score ? scores : rest) << n;
    }
    if (!primary.isEmpty() && names.contains(primary)) {
        scores.prepend(primary);
    }
    return scores + rest;
}

std::vector<MetricPanel> metricPanels(const std::vector<PointSeries>& series) {
    // Key: (not "eval · score", group, kind) so the eval scores come first.
    std::map<std::tuple<bool, QString, int>, MetricPanel> panels;
    for (const PointSeries& s : series) {
        const metrics::MetricInfo info = metricInfo(s);
        const QString group =
            QString::fromStdString(std::string(metrics::groupOf(s.name.toStdString())));
        const bool evalScore = group == QLatin1String("eval") && info.kind == metrics::Kind::Score;
        MetricPanel& p = panels[{!evalScore, group, static_cast<int>(info.kind)}];
        if (p.names.isEmpty()) {
            p.group = group;
            p.kind = info.kind;
            p.title = group + QStringLiteral(" · ") + kindText(info.kind);
        }
        if (!p.names.contains(s.name)) {
            p.names << s.name;
        }
    }
    std::vector<MetricPanel> out;
    for (auto& [key, p] : panels) {
        p.names.sort();
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace runplane::gui
