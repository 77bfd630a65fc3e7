#include "gui/models/compare_data.h"

#include <QObject>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "backend/analysis/run_metrics.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"
#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/models/metric_views.h"
#include "gui/models/qt_text.h"
#include "gui/models/run_derivations.h"

namespace runplane::gui {

namespace {

// A node id is shown (and kept in the Qt rows) as its text.
void flatten(const YAML::Node& node, const QString& path,
             std::vector<std::pair<QString, QString>>& out,
             std::map<QString, QStringList>* lists = nullptr) {
    if (node.IsMap()) {
        for (const auto& kv : node) {
            const QString key = qs(kv.first.as<std::string>());
            flatten(kv.second, path.isEmpty() ? key : path + QLatin1Char('.') + key, out, lists);
        }
    } else if (node.IsSequence()) {
        bool scalars = true;
        for (const auto& item : node) {
            scalars = scalars && item.IsScalar();
        }
        if (scalars) {
            QStringList items;
            for (const auto& item : node) {
                items << qs(item.as<std::string>());
            }
            out.emplace_back(
                path, QStringLiteral("[") + items.join(QStringLiteral(", ")) + QStringLiteral("]"));
            if (lists != nullptr) {
                (*lists)[path] = items;
            }
            return;
        }
        int i = 0;
        for (const auto& item : node) {
            flatten(item, path + QStringLiteral("[%1]").arg(i++), out, lists);
        }
    } else if (node.IsScalar()) {
        out.emplace_back(path, qs(node.as<std::string>()));
    } else if (node.IsNull()) {
        out.emplace_back(path, QStringLiteral("null"));
    }
}

}  // namespace

std::vector<std::pair<QString, QString>> flattenRecipe(const QString& yaml, QString* error,
                                                       std::map<QString, QStringList>* lists) {
    std::vector<std::pair<QString, QString>> out;
    std::string text = yaml.toStdString();
    auto parsed = plan::parseRecipe(text, "recipe snapshot");
    if (parsed) {
        text = plan::writeRecipe(*parsed);
    } else if (error != nullptr) {
        *error = qs(parsed.error());
    }
    try {
        flatten(YAML::Load(text), QString(), out, lists);
    } catch (const YAML::Exception& e) {
        if (error != nullptr) {
            *error = qs(e.what());
        }
    }
    return out;
}

Result<CompareData> loadCompare(db::History& history, const QStringList& runIds) {
    CompareData data;
    std::set<QString> names;
    std::map<QString, bool> scoreKind;  // first run that has the series decides
    QString primary;
    std::map<std::string, db::History::RunAnnotation> notes;  // tags and notes (issue 49)
    if (auto a = history.runAnnotations()) {
        for (auto& [id, annotation] : *a) {
            notes.emplace(id, std::move(annotation));
        }
    }
    for (const QString& id : runIds) {
        auto record = history.run(RunId{id.toStdString()});
        if (!record) {
            return Error{record.error()};
        }
        if (!record->has_value()) {
            return Error{"run '" + id.toStdString() + "' is not in " + history.path()};
        }
        const db::RunRecord& r = **record;
        CompareRun c;
        c.run.id = id;
        c.run.name = qs(r.name);
        c.run.state = r.state;
        c.run.recipe = recipeLabel(qs(r.recipeYaml));
        for (const std::string& n : r.nodes) {
            c.run.nodes << qs(n);
        }
        c.run.startT = nsToSeconds(r.startedNs);
        c.run.endT = r.endedNs > 0 ? nsToSeconds(r.endedNs) : 0;
        if (const auto it = notes.find(r.id.value()); it != notes.end()) {
            for (const std::string& t : it->second.tags) {
                c.run.tags << qs(t);
            }
            c.run.note = qs(it->second.note);
        }
        c.recipeYaml = qs(r.recipeYaml);
        c.recipeFields = flattenRecipe(c.recipeYaml, &c.recipeError, &c.recipeLists);
        try {
            std::vector<std::pair<QString, QString>> written;
            flatten(YAML::Load(r.recipeYaml), QString(), written);
            for (const auto& [path, value] : written) {
                c.writtenPaths.insert(path);
            }
        } catch (const YAML::Exception&) {
            // recipeError already says why the snapshot does not parse
        }
        c.steps = stepMappingFromRecipe(c.recipeYaml);
        if (auto peaks = history.runPeaks(r.id)) {
            for (const db::NodePeak& p : *peaks) {
                c.run.peaks.push_back(
                    NodePeakRow{qs(p.nodeId), p.peak, nsToSeconds(p.peakNs), {}, 0});
            }
        }
        const plan::Analysis analysis = metrics::analysisOf(r.recipeYaml);
        c.run.primaryMetric = qs(analysis.primaryMetric);
        if (auto metrics = loadMetricValues(history, r.id, "", analysis.metricKinds)) {
            c.run.metrics = std::move(*metrics);
        }
        db::SeriesFilter f;
        f.runId = r.id;
        auto series = history.listSeries(f);
        if (!series) {
            return Error{series.error()};
        }
        for (const db::SeriesInfo& info : *series) {
            if (info.name.find('/') == std::string::npos) {
                continue;  // sampled telemetry (rss, ...), not a metric
            }
            auto s = loadSeries(history, info, 0, 0, 100000);
            if (!s) {
                return Error{s.error()};
            }
            names.insert(s->name);
            c.metrics.push_back(std::move(*s));
        }
        if (Status lineage = applyLineage(history, c); !lineage.ok()) {  // issue 49
            return Error{lineage.error()};
        }
        applyKindOverrides(c.metrics, analysis.metricKinds);
        // The picker follows the recipes' kinds too (an override may make an eval series a
        // score, or not); the first run's primary metric leads.
        for (const PointSeries& s : c.metrics) {
            const bool score = s.name.startsWith(QLatin1String("eval/")) &&
                               metricInfo(s).kind == metrics::Kind::Score;
            scoreKind.emplace(s.name, score);
        }
        if (primary.isEmpty()) {
            primary = c.run.primaryMetric;
        }
        data.runs.push_back(std::move(c));
    }
    data.metricNames =
        orderMetricNames(QStringList(names.begin(), names.end()), scoreKind, primary);
    return data;
}

namespace {

// The words of a value: a list's items, else the text split at white space.
QStringList wordsOf(const CompareRun& run, const QString& field, const QString& value) {
    const auto it = run.recipeLists.find(field);
    return it != run.recipeLists.end() ? it->second
                                       : value.split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

// Longest common subsequence of two word lists: marks the words of each that are not in it
// (changed), and the words of `a` next to which `b` has words that `a` lacks (context).
constexpr qsizetype kMaxDiffWords = 2000;  // bounds the table (4M cells)

void markChanges(const QStringList& a, const QStringList& b, std::vector<bool>& changedA,
                 std::vector<bool>& contextA) {
    const auto n = a.size();
    const auto m = b.size();
    std::vector<int> lcs(static_cast<size_t>((n + 1) * (m + 1)), 0);
    auto at = [&](qsizetype i, qsizetype j) -> int& {
        return lcs[static_cast<size_t>(i * (m + 1) + j)];
    };
    for (qsizetype i = n - 1; i >= 0; --i) {
        for (qsizetype j = m - 1; j >= 0; --j) {
            at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        }
    }
    qsizetype i = 0;
    qsizetype j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            ++i;
            ++j;
        } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
            // b has a word a lacks, between a[i-1] and a[i]: both are context.
            if (i > 0) {
                contextA[static_cast<size_t>(i - 1)] = true;
            }
            if (i < n) {
                contextA[static_cast<size_t>(i)] = true;
            }
            ++j;
        } else {
            changedA[static_cast<size_t>(i)] = true;
            ++i;
        }
    }
}

// The words of `words` that differ from the other runs', each group after the word before it,
// "…" for what is left out.
QString differingWords(const QStringList& words, const std::vector<QStringList>& others) {
    std::vector<bool> changed(static_cast<size_t>(words.size()), false);
    std::vector<bool> context(static_cast<size_t>(words.size()), false);
    for (const QStringList& other : others) {
        if (words.size() > kMaxDiffWords || other.size() > kMaxDiffWords) {
            return words.join(QLatin1Char(' '));
        }
        markChanges(words, other, changed, context);
    }
    std::vector<bool> keep(changed.size(), false);
    for (size_t i = 0; i < changed.size(); ++i) {
        keep[i] = changed[i] || context[i] || (i + 1 < changed.size() && changed[i + 1]);
    }
    QStringList out;
    bool skipped = false;
    for (size_t i = 0; i < keep.size(); ++i) {
        if (!keep[i]) {
            skipped = true;
            continue;
        }
        if (skipped || (out.isEmpty() && i > 0)) {
            out << QStringLiteral("…");
        }
        skipped = false;
        out << words[static_cast<qsizetype>(i)];
    }
    if (skipped && !out.isEmpty()) {
        out << QStringLiteral("…");
    }
    return out.isEmpty() ? words.join(QLatin1Char(' ')) : out.join(QLatin1Char(' '));
}

// What a run that leaves `field` out has: the schema's default, else "(default)".
QString defaultText(const QString& field) {
    const plan::RecipeField* f = plan::findRecipeField(field.toStdString());
    if (f == nullptr) {
        return QStringLiteral("(default)");
    }
    const std::string value = plan::fieldValueText(f->defaultValue());
    if (value.empty()) {
        return *f->unsetText != '\0' ? QStringLiteral("(%1)").arg(qs(f->unsetText))
                                     : QStringLiteral("(default)");
    }
    return qs(value);
}

}  // namespace

std::vector<DiffRow> recipeDiff(const std::vector<CompareRun>& runs) {
    std::vector<QString> order;
    std::set<QString> seen;
    std::vector<std::map<QString, QString>> maps;
    for (const CompareRun& r : runs) {
        std::map<QString, QString> m;
        for (const auto& [k, v] : r.recipeFields) {
            m[k] = v;
            if (seen.insert(k).second) {
                order.push_back(k);
            }
        }
        maps.push_back(std::move(m));
    }
    std::vector<DiffRow> rows;
    for (const QString& field : order) {
        DiffRow row{field, {}, {}};
        std::set<QString> distinct;
        std::vector<QStringList> words;
        QStringList shown;
        int longest = 0;
        for (size_t i = 0; i < maps.size(); ++i) {
            const auto it = maps[i].find(field);
            // Left out by the normalised snapshot: at its default (written so or not).
            const bool present = it != maps[i].end();
            const QString v = present ? it->second : defaultText(field);
            words.push_back(present ? wordsOf(runs[i], field, v)
                                    : v.split(QLatin1Char(' '), Qt::SkipEmptyParts));
            longest = std::max(longest, static_cast<int>(words.back().size()));
            row.full << v;
            distinct.insert(v);
            shown << (present || runs[i].writtenPaths.contains(field) ||
                              v.startsWith(QLatin1Char('('))
                          ? v
                          : v + QStringLiteral(" (default)"));
        }
        if (distinct.size() <= 1) {
            continue;
        }
        for (size_t i = 0; i < words.size(); ++i) {
            if (longest <= kDiffWholeWords) {
                row.values << shown[static_cast<qsizetype>(i)];
                continue;
            }
            std::vector<QStringList> others;
            for (size_t j = 0; j < words.size(); ++j) {
                if (j != i && words[j] != words[i]) {
                    others.push_back(words[j]);
                }
            }
            row.values << (others.empty() ? row.full[static_cast<qsizetype>(i)]
                                          : differingWords(words[i], others));
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

CurveXY metricCurve(const CompareRun& run, const QString& metric, CompareAxis axis) {
    CurveXY c;
    for (const PointSeries& s : run.metrics) {
        if (s.name != metric) {
            continue;
        }
        std::vector<std::pair<double, double>> pts;
        double firstStep = -1;
        for (size_t i = 0; i < s.t.size(); ++i) {
            const double step = i < s.step.size() ? s.step[i] : -1;
            if (step >= 0 && (firstStep < 0 || step < firstStep)) {
                firstStep = step;
            }
        }
        const StepDomain domain = stepDomain(s.name);
        for (size_t i = 0; i < s.t.size(); ++i) {
            const double step = i < s.step.size() ? s.step[i] : -1;
            double x = s.t[i] - run.run.startT;
            if (axis == CompareAxis::Rollout) {
                const std::optional<double> at =
                    step >= 0 ? stepOnAxis(step, domain, StepAxis::Rollout, run.steps)
                              : std::nullopt;
                if (!at) {
                    continue;
                }
                x = *at;
            } else if (axis == CompareAxis::Step && step >= 0) {
                x = step;
            } else if (axis == CompareAxis::RelativeStep && step >= 0) {
                x = step - firstStep;
            }
            pts.emplace_back(x, s.value[i]);
        }
        std::stable_sort(pts.begin(), pts.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [x, y] : pts) {
            c.x.push_back(x);
            c.y.push_back(y);
        }
    }
    return c;
}

std::vector<double> emaSmooth(const std::vector<double>& y, double weight) {
    return emaSmooth({}, y, weight);
}

std::vector<double> emaSmooth(const std::vector<double>& x, const std::vector<double>& y,
                              double weight) {
    if (weight <= 0 || y.empty()) {
        return y;
    }
    weight = std::min(weight, 0.999);
    // TensorBoard leaves a constant series alone (its debiasing would add rounding noise).
    if (std::all_of(y.begin(), y.end(), [&](double v) { return v == y.front(); })) {
        return y;
    }
    const bool useX = x.size() == y.size();
    double spacing = 0;
    if (useX) {
        std::vector<double> gaps;
        double prev = std::numeric_limits<double>::quiet_NaN();
        for (size_t i = 0; i < y.size(); ++i) {
            if (!std::isfinite(y[i]) || !std::isfinite(x[i])) {
                continue;
            }
            if (std::isfinite(prev) && x[i] > prev) {
                gaps.push_back(x[i] - prev);
            }
            prev = x[i];
        }
        if (!gaps.empty()) {
            auto mid = gaps.begin() + static_cast<std::ptrdiff_t>((gaps.size() - 1) / 2);
            std::nth_element(gaps.begin(), mid, gaps.end());
            spacing = *mid;
        }
    }
    std::vector<double> s(y.size());
    double accum = 0;
    double keep = 1;  // product of the weights so far: the bias towards the zero start
    double prevX = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = 0; i < y.size(); ++i) {
        if (!std::isfinite(y[i]) || (useX && !std::isfinite(x[i]))) {
            s[i] = y[i];
            continue;
        }
        double w = weight;
        if (spacing > 0 && std::isfinite(prevX) && x[i] > prevX) {
            w = std::pow(weight, (x[i] - prevX) / spacing);
        }
        accum = w * accum + (1 - w) * y[i];
        keep *= w;
        s[i] = accum / (1 - keep);
        if (useX) {
            prevX = x[i];
        }
    }
    return s;
}

QString compareXLabel(const CompareData& data, const QString& metric, CompareAxis axis) {
    const StepDomain domain = stepDomain(metric);
    const QString own = domain == StepDomain::Optimizer ? QObject::tr("optimizer step (train/*)")
                        : domain == StepDomain::Rollout
                            ? QObject::tr("rollout id")
                            : QObject::tr("step (the series' own numbering)");
    switch (axis) {
        case CompareAxis::Step:
            return own;
        case CompareAxis::RelativeStep:
            return QObject::tr("%1s since the run's first one").arg(own);
        case CompareAxis::WallTime:
            return QObject::tr("time since run start");
        case CompareAxis::Rollout:
            break;
    }
    if (domain == StepDomain::Rollout) {
        return QObject::tr("rollout id");
    }
    QStringList divisors;
    QStringList leftOut;
    for (const CompareRun& r : data.runs) {
        const QString name = r.run.name.isEmpty() ? r.run.id : r.run.name;
        if (domain == StepDomain::Optimizer && r.steps.known()) {
            divisors << QStringLiteral("%1 ÷ %2").arg(name).arg(r.steps.stepsPerRollout);
        } else {
            leftOut << name;
        }
    }
    QString label = QObject::tr("rollout");
    if (!divisors.isEmpty()) {
        label += QObject::tr(" (optimizer step: %1)").arg(divisors.join(QStringLiteral(", ")));
    }
    if (!leftOut.isEmpty()) {
        label += domain == StepDomain::Optimizer
                     ? QObject::tr(" — not shown (steps per rollout unknown): %1")
                           .arg(leftOut.join(QStringLiteral(", ")))
                     : QObject::tr(" — not shown (not a rollout or train/* series): %1")
                           .arg(leftOut.join(QStringLiteral(", ")));
    }
    return label;
}

QString compareCsv(const CompareData& data, const QString& metric, CompareAxis axis,
                   double weight) {
    const QString xName = axis == CompareAxis::Step           ? QStringLiteral("step")
                          : axis == CompareAxis::RelativeStep ? QStringLiteral("relative_step")
                          : axis == CompareAxis::Rollout      ? QStringLiteral("rollout")
                                                              : QStringLiteral("seconds");
    QString csv = QStringLiteral("run_id,run_name,metric,%1,value,smoothed\n").arg(xName);
    auto quote = [](QString s) -> QString {
        if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"'))) {
            s.replace(QStringLiteral("\""), QStringLiteral("\"\""));
            return QStringLiteral("\"") + s + QStringLiteral("\"");
        }
        return s;
    };
    for (const CompareRun& r : data.runs) {
        const CurveXY c = metricCurve(r, metric, axis);
        const std::vector<double> smooth = emaSmooth(c.x, c.y, weight);
        for (size_t i = 0; i < c.x.size(); ++i) {
            csv += quote(r.run.id) + QLatin1Char(',') + quote(r.run.name) + QLatin1Char(',') +
                   quote(metric) + QLatin1Char(',') + QString::number(c.x[i], 'g', 12) +
                   QLatin1Char(',') + QString::number(c.y[i], 'g', 10) + QLatin1Char(',') +
                   QString::number(smooth[i], 'g', 10) + QLatin1Char('\n');
        }
    }
    return csv;
}

}  // namespace runplane::gui
