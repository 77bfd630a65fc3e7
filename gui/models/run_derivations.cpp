#include "gui/models/run_derivations.h"

#include <QCoreApplication>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>

#include "backend/plan/catalog.h"
#include "backend/plan/memory_model.h"
#include "backend/plan/recipe.h"
#include "backend/plan/topology.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {

using telemetry::EventKind;

namespace {

QString attr(const db::EventAttrs& attrs, const char* key) {
    return qs(db::attrText(attrs, key));
}

double medianSpacing(const std::vector<double>& t) {
    if (t.size() < 2) {
        return 0;
    }
    std::vector<double> d;
    d.reserve(t.size() - 1);
    for (size_t i = 1; i < t.size(); ++i) {
        d.push_back(t[i] - t[i - 1]);
    }
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    return d[d.size() / 2];
}

}  // namespace

const plan::ModelCatalog* defaultModelCatalog() {
    static const std::unique_ptr<plan::ModelCatalog> catalog =
        []() -> std::unique_ptr<plan::ModelCatalog> {
        auto dir = plan::locateRecipesDir(QCoreApplication::applicationDirPath().toStdString());
        if (!dir) {
            return nullptr;
        }
        auto loaded = plan::ModelCatalog::loadDirectory(*dir + "/models");
        if (!loaded) {
            return nullptr;
        }
        return std::make_unique<plan::ModelCatalog>(std::move(*loaded));
    }();
    return catalog.get();
}

int ncclVersionCode(const QString& version) {
    const QStringList parts = version.split(QLatin1Char('.'));
    if (parts.size() < 3) {
        return 0;
    }
    bool ok1 = false;
    bool ok2 = false;
    bool ok3 = false;
    const int code =
        parts[0].toInt(&ok1) * 10000 + parts[1].toInt(&ok2) * 100 + parts[2].toInt(&ok3);
    return ok1 && ok2 && ok3 ? code : 0;
}

std::vector<PhaseInterval> phasesFromEvents(const std::vector<db::EventRecord>& events,
                                            double endT) {
    std::vector<PhaseInterval> phases;
    NodeId phaseNode;
    for (const db::EventRecord& e : events) {
        if (e.kind != toString(EventKind::Phase)) {
            continue;
        }
        if (phaseNode.empty()) {
            phaseNode = e.nodeId;
        }
        if (e.nodeId != phaseNode) {
            continue;
        }
        const double t = nsToSeconds(e.tNs);
        if (!phases.empty() && phases.back().t1 <= phases.back().t0) {
            phases.back().t1 = t;
        }
        QString name = attr(e.attrs, telemetry::attr::kPhase);
        if (name.isEmpty()) {
            name = qs(e.message);
        }
        if (name == QLatin1String("done") || name.isEmpty()) {
            continue;
        }
        phases.push_back(PhaseInterval{name, qs(e.nodeId), t, t});
    }
    if (!phases.empty() && phases.back().t1 <= phases.back().t0) {
        phases.back().t1 = std::max(endT, phases.back().t0);
    }
    return phases;
}

double secondsAbove(const PointSeries& series, double threshold) {
    if (series.t.empty() || threshold <= 0) {
        return 0;
    }
    const double median = medianSpacing(series.t);
    const double cap = median > 0 ? 2 * median : 0;
    double total = 0;
    for (size_t i = 0; i < series.t.size(); ++i) {
        if (series.value[i] <= threshold) {
            continue;
        }
        const double dt = i + 1 < series.t.size() ? series.t[i + 1] - series.t[i] : median;
        total += cap > 0 ? std::min(dt, cap) : dt;
    }
    return total;
}

QString phaseAt(const std::vector<PhaseInterval>& phases, double t) {
    // The phase in force at t is the one begun last at or before t (intervals are in time
    // order): where one ends as the next begins, at the same instant, the next one is in force.
    // A restarted daemon reads the lines the run printed while it was down at the instant of
    // its first sample (issue 46): that sample belongs to the phase those lines began.
    QString found;
    for (const PhaseInterval& p : phases) {
        if (t >= p.t0 && t <= p.t1) {
            found = p.phase;
        }
    }
    return found;
}

QString recipeLabel(const QString& recipeYaml) {
    if (recipeYaml.trimmed().isEmpty()) {
        return {};
    }
    auto recipe = plan::parseRecipe(recipeYaml.toStdString(), "recipe snapshot");
    if (!recipe) {
        return {};
    }
    if (!recipe->name.empty()) {
        return qs(recipe->name);
    }
    return qs(recipe->model.name);
}

MemoryLines memoryLinesFromRecipe(const QString& recipeYaml, double ramBytes,
                                  const plan::ModelCatalog* catalog, double daemonAlarmBytes) {
    MemoryLines lines;
    lines.ramBytes = ramBytes;
    QStringList source;
    std::optional<plan::Recipe> recipe;
    if (!recipeYaml.trimmed().isEmpty()) {
        if (auto parsed = plan::parseRecipe(recipeYaml.toStdString(), "recipe snapshot")) {
            recipe = std::move(*parsed);
        }
    }
    if (lines.ramBytes <= 0 && recipe) {
        lines.ramBytes = recipe->hardware.hostRamGb * plan::kGb;
    }
    std::optional<plan::MemoryPlan> memory;
    if (recipe && catalog != nullptr) {
        if (auto shape = plan::resolveModel(*recipe, *catalog)) {
            memory = plan::planMemory(*recipe, *shape);
        }
    }
    if (memory) {
        // The run's own plan: per phase, the highest planned per-node peak; the band spans the
        // lowest to the highest of the non-load phases (steady state).
        for (plan::Phase phase : plan::kPhases) {
            double peak = 0;
            for (const plan::NodeMemory& n : memory->nodes) {
                peak = std::max(peak, n.phases[static_cast<size_t>(phase)].total());
            }
            if (peak > 0) {
                lines.plannedPhases.push_back({QString::fromUtf8(plan::toString(phase)), peak});
                if (phase != plan::Phase::Load) {
                    lines.healthyLowBytes =
                        lines.healthyLowBytes > 0 ? std::min(lines.healthyLowBytes, peak) : peak;
                    lines.healthyHighBytes = std::max(lines.healthyHighBytes, peak);
                }
            }
            lines.plannedPeakBytes = std::max(lines.plannedPeakBytes, peak);
        }
        source << QStringLiteral("planned peaks from the run's recipe");
    }
    if (recipe && recipe->analysis.memoryAlarmGb.has_value()) {
        lines.alarmBytes = *recipe->analysis.memoryAlarmGb * plan::kGb;
        source << QStringLiteral("alarm from the recipe's analysis.memory_alarm_gb");
    } else if (daemonAlarmBytes > 0) {
        lines.alarmBytes = daemonAlarmBytes;
        source << QStringLiteral("alarm from the daemon's --mem-alarm-bytes");
    } else if (memory && memory->hostAlarmBytes > 0) {
        lines.alarmBytes = memory->hostAlarmBytes;
        source << QStringLiteral("alarm from the run's plan");
    }
    if (source.isEmpty()) {
        source << QStringLiteral("no recipe plan and no daemon alarm: RAM only");
    }
    lines.source = source.join(QStringLiteral("; "));
    return lines;
}

}  // namespace runplane::gui
