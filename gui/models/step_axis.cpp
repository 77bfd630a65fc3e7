#include "gui/models/step_axis.h"

#include <QObject>

#include "backend/plan/recipe.h"

namespace runplane::gui {

StepDomain stepDomain(const QString& seriesName) {
    const QString n = seriesName.toLower();
    if (n.startsWith(QLatin1String("train/"))) {
        return StepDomain::Optimizer;
    }
    for (const char* prefix :
         {"rollout/", "perf/", "eval/", "multi_turn/", "passrate/", "memory/"}) {
        if (n.startsWith(QLatin1String(prefix))) {
            return StepDomain::Rollout;
        }
    }
    return StepDomain::Unknown;
}

QString stepDomainName(StepDomain domain) {
    switch (domain) {
        case StepDomain::Optimizer:
            return QObject::tr("optimizer step");
        case StepDomain::Rollout:
            return QObject::tr("rollout");
        case StepDomain::Unknown:
            break;
    }
    return QObject::tr("step");
}

StepMapping stepMappingFromRecipe(const QString& recipeYaml) {
    StepMapping m;
    if (recipeYaml.trimmed().isEmpty()) {
        m.source = QObject::tr("no recipe snapshot");
        return m;
    }
    auto recipe = plan::parseRecipe(recipeYaml.toStdString(), "recipe snapshot");
    if (!recipe) {
        m.source = QObject::tr("the recipe snapshot does not parse");
        return m;
    }
    const plan::Batch& b = recipe->batch;
    if (b.numStepsPerRollout && *b.numStepsPerRollout > 0) {
        m.stepsPerRollout = *b.numStepsPerRollout;
        m.source = QObject::tr("recipe: batch.num_steps_per_rollout = %1").arg(m.stepsPerRollout);
        return m;
    }
    const long long samples =
        static_cast<long long>(b.rolloutBatchSize) * static_cast<long long>(b.nSamplesPerPrompt);
    if (b.globalBatchSize && *b.globalBatchSize > 0 && samples > 0 &&
        samples % *b.globalBatchSize == 0) {
        m.stepsPerRollout = static_cast<int>(samples / *b.globalBatchSize);
        m.source = QObject::tr("recipe: %1 x %2 / global_batch_size %3 = %4")
                       .arg(b.rolloutBatchSize)
                       .arg(b.nSamplesPerPrompt)
                       .arg(*b.globalBatchSize)
                       .arg(m.stepsPerRollout);
        return m;
    }
    m.source = QObject::tr(
        "the recipe gives neither num_steps_per_rollout nor a dividing "
        "global_batch_size");
    return m;
}

std::optional<double> stepOnAxis(double step, StepDomain domain, StepAxis axis,
                                 const StepMapping& mapping) {
    if (domain == StepDomain::Unknown) {
        return std::nullopt;
    }
    const bool same = (domain == StepDomain::Rollout) == (axis == StepAxis::Rollout);
    if (same) {
        return step;
    }
    if (!mapping.known()) {
        return std::nullopt;
    }
    const double s = mapping.stepsPerRollout;
    return axis == StepAxis::Rollout ? step / s : step * s;
}

namespace {
StepDomain domainOfAxis(StepAxis axis) {
    return axis == StepAxis::Rollout ? StepDomain::Rollout : StepDomain::Optimizer;
}
StepAxis axisOfDomain(StepDomain d) {
    return d == StepDomain::Optimizer ? StepAxis::Optimizer : StepAxis::Rollout;
}
}  // namespace

StepPlan planStepAxis(const QStringList& names, StepAxis axis, const StepMapping& mapping) {
    StepPlan plan;
    plan.axis = axis;
    plan.include.assign(static_cast<size_t>(names.size()), true);
    std::vector<StepDomain> domains;
    bool allConvert = true;
    bool anyConverted = false;
    for (const QString& n : names) {
        const StepDomain d = stepDomain(n);
        domains.push_back(d);
        allConvert = allConvert && stepOnAxis(0, d, axis, mapping).has_value();
        anyConverted = anyConverted || d != domainOfAxis(axis);
    }
    const QString asked = stepDomainName(domainOfAxis(axis));
    if (allConvert) {
        plan.xLabel = asked;
        if (anyConverted && !names.isEmpty()) {
            plan.xLabel +=
                axis == StepAxis::Rollout
                    ? QObject::tr(" (train/*: optimizer step ÷ %1)").arg(mapping.stepsPerRollout)
                    : QObject::tr(" (rollout id × %1)").arg(mapping.stepsPerRollout);
        }
        return plan;
    }
    bool oneDomain = true;
    for (StepDomain d : domains) {
        oneDomain = oneDomain && d == domains.front();
    }
    const QString why = mapping.source.isEmpty()
                            ? QObject::tr("steps per rollout unknown")
                            : QObject::tr("steps per rollout unknown: %1").arg(mapping.source);
    if (oneDomain) {
        plan.ownDomain = true;
        plan.axis = axisOfDomain(domains.front());
        plan.xLabel = stepDomainName(domains.front()) +
                      (domains.front() == StepDomain::Unknown
                           ? QObject::tr(" (this series' own numbering)")
                           : QObject::tr(" (not on the %1 axis: %2)").arg(asked, why));
        return plan;
    }
    // Mixed domains that do not convert: keep those of the asked domain (else the first one's).
    StepDomain keep = domainOfAxis(axis);
    bool haveKeep = false;
    for (StepDomain d : domains) {
        haveKeep = haveKeep || d == keep;
    }
    if (!haveKeep) {
        keep = domains.front();
        plan.ownDomain = true;
        plan.axis = axisOfDomain(keep);
    }
    for (qsizetype i = 0; i < names.size(); ++i) {
        const auto at = static_cast<size_t>(i);
        if (domains[at] != keep) {
            plan.include[at] = false;
            plan.leftOut
                << QObject::tr("%1 (counted in %2s)").arg(names[i], stepDomainName(domains[at]));
        }
    }
    plan.xLabel =
        stepDomainName(keep) +
        QObject::tr(" — not shown: %1; %2").arg(plan.leftOut.join(QStringLiteral(", ")), why);
    return plan;
}

void seriesOnAxis(const PointSeries& series, const StepPlan& plan, const StepMapping& mapping,
                  std::vector<double>& x, std::vector<double>& y) {
    x.clear();
    y.clear();
    const StepDomain d = stepDomain(series.name);
    for (size_t i = 0; i < series.t.size() && i < series.value.size(); ++i) {
        const double step = i < series.step.size() ? series.step[i] : -1;
        if (step < 0) {
            continue;
        }
        const std::optional<double> at =
            plan.ownDomain ? std::optional<double>(step) : stepOnAxis(step, d, plan.axis, mapping);
        if (at) {
            x.push_back(*at);
            y.push_back(series.value[i]);
        }
    }
}

}  // namespace runplane::gui
