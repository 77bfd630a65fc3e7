#include "gui/pages/plan_views.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "gui/models/qt_text.h"
#include "gui/widgets/palette.h"

namespace runplane::gui {

namespace {

QString phaseLabel(plan::Phase p) {
    return QString::fromLatin1(plan::toString(p)).replace(QLatin1Char('_'), QLatin1Char(' '));
}

BudgetBar barOf(const plan::PhaseMemory& phase, plan::Phase p) {
    BudgetBar bar;
    bar.label = phaseLabel(p);
    for (const plan::MemoryItem& item : phase.items()) {
        if (item.bytes <= 0) {
            continue;
        }
        bar.components.push_back(BudgetComponent{
            QString::fromLatin1(plan::toString(item.component)), item.bytes / plan::kGb,
            qs(plan::describe(item)) + QStringLiteral("\n= ") +
                QString::fromLatin1(plan::formulaOf(item.component)) +
                (item.capped ? QStringLiteral(" (capped)") : QString()) +
                (plan::isFixedBudget(item.component)
                     ? QStringLiteral("\nfixed budget: a recipe field, not derived from the model")
                     : QString()),
            static_cast<int>(item.component)});  // its colour follows the component
    }
    return bar;
}

std::vector<BudgetBar> barsOf(const std::array<plan::PhaseMemory, plan::kPhaseCount>& phases) {
    std::vector<BudgetBar> bars;
    for (int i = 0; i < plan::kPhaseCount; ++i) {
        bars.push_back(
            barOf(phases[static_cast<size_t>(i)], plan::kPhases[static_cast<size_t>(i)]));
    }
    return bars;
}

bool sameBudget(const plan::NodeMemory& a, const plan::NodeMemory& b) {
    for (int i = 0; i < plan::kPhaseCount; ++i) {
        const auto& pa = a.phases[static_cast<size_t>(i)];
        const auto& pb = b.phases[static_cast<size_t>(i)];
        if (pa.items().size() != pb.items().size() || pa.total() != pb.total()) {
            return false;
        }
    }
    return a.trainerRanks == b.trainerRanks && a.engineGpus == b.engineGpus;
}

}  // namespace

BudgetChartData hostBudgetChart(const plan::MemoryPlan& memory) {
    BudgetChartData chart;
    chart.yLabel = QStringLiteral("host memory per node (GB)");
    size_t i = 0;
    while (i < memory.nodes.size()) {
        size_t j = i + 1;
        while (j < memory.nodes.size() && sameBudget(memory.nodes[i], memory.nodes[j])) {
            ++j;
        }
        BudgetGroup group;
        group.title = j - i == 1 ? QStringLiteral("node %1").arg(memory.nodes[i].node)
                                 : QStringLiteral("nodes %1–%2")
                                       .arg(memory.nodes[i].node)
                                       .arg(memory.nodes[j - 1].node);
        group.bars = barsOf(memory.nodes[i].phases);
        chart.groups.push_back(std::move(group));
        i = j;
    }
    if (memory.hostRamBytes > 0) {
        chart.lines.push_back(AlarmLine{
            QStringLiteral("host RAM %1 GB").arg(memory.hostRamBytes / plan::kGb, 0, 'f', 0),
            memory.hostRamBytes / plan::kGb, QColor(60, 60, 60), false});
    }
    if (memory.hostAlarmBytes > 0) {
        chart.lines.push_back(AlarmLine{QStringLiteral("sustained alarm %1 GB")
                                            .arg(memory.hostAlarmBytes / plan::kGb, 0, 'f', 0),
                                        memory.hostAlarmBytes / plan::kGb, errorColor(), true});
    }
    return chart;
}

BudgetChartData gpuBudgetChart(const plan::MemoryPlan& memory) {
    BudgetChartData chart;
    chart.yLabel = QStringLiteral("device memory per GPU (GB)");
    for (const plan::GpuMemory& g : memory.gpus) {
        chart.groups.push_back(BudgetGroup{qs(g.label()), barsOf(g.phases)});
    }
    if (memory.gpuBytes > 0) {
        chart.lines.push_back(
            AlarmLine{QStringLiteral("HBM %1 GB").arg(memory.gpuBytes / plan::kGb, 0, 'f', 0),
                      memory.gpuBytes / plan::kGb, QColor(60, 60, 60), false});
    }
    return chart;
}

QString toString(TopologyColor mode) {
    switch (mode) {
        case TopologyColor::TpGroup:
            return QStringLiteral("TP group");
        case TopologyColor::PpStage:
            return QStringLiteral("PP stage");
        case TopologyColor::EpGroup:
            return QStringLiteral("EP group");
        case TopologyColor::DpRank:
            return QStringLiteral("DP rank");
        case TopologyColor::Engine:
            return QStringLiteral("rollout engine");
    }
    return {};
}

QString invalidLayoutReason(const std::vector<plan::Finding>& findings) {
    static const std::set<std::string> kLayoutRules = {"recipe.limits",
                                                       "cluster.size",
                                                       "cluster.trainer-placement",
                                                       "cluster.gpu-budget",
                                                       "trainer.positive",
                                                       "trainer.dense-grid",
                                                       "trainer.expert-grid",
                                                       "trainer.ep-needs-experts",
                                                       "trainer.experts-ep",
                                                       "trainer.heads-tp",
                                                       "trainer.groups-tp",
                                                       "trainer.linear-heads",
                                                       "trainer.layers-pp",
                                                       "trainer.uneven-pp-needs-pp",
                                                       "trainer.vpp",
                                                       "trainer.fsdp",
                                                       "rollout.engine-divisible",
                                                       "rollout.engines-count",
                                                       "rollout.pp-divides",
                                                       "rollout.dp-divides",
                                                       "rollout.ep-divides",
                                                       "rollout.engine-ep-experts"};
    QStringList lines;
    for (const plan::Finding& f : findings) {
        if (f.severity == plan::Severity::Error && kLayoutRules.count(f.ruleId) > 0) {
            lines << QString::fromStdString(f.ruleId + ": " + f.message);
        }
    }
    return lines.join(QLatin1Char('\n'));
}

TopologyData topologyGrid(const plan::Topology& topology, TopologyColor mode) {
    TopologyData data;
    data.nodes = topology.layout.nodes;
    data.gpusPerNode = topology.layout.gpusPerNode;
    data.mixedNodes.assign(static_cast<size_t>(std::max(0, data.nodes)), false);
    std::vector<bool> hasTrainer(data.mixedNodes.size(), false);
    std::vector<bool> hasEngine(data.mixedNodes.size(), false);
    std::map<std::tuple<int, int, int>, int> groups;  // group coordinates -> colour index
    for (const plan::GpuSlot& s : topology.gpus) {
        TopologyCell cell;
        cell.node = s.node;
        cell.gpu = s.localGpu;
        const plan::TrainerCoord& t = s.trainer;
        const plan::EngineCoord& e = s.engine;
        const bool trainer = t.rank >= 0;
        const bool engine = e.engine >= 0;
        if (static_cast<size_t>(s.node) < hasTrainer.size()) {
            hasTrainer[static_cast<size_t>(s.node)] =
                hasTrainer[static_cast<size_t>(s.node)] || trainer;
            hasEngine[static_cast<size_t>(s.node)] =
                hasEngine[static_cast<size_t>(s.node)] || engine;
        }
        auto groupKey = [&](std::tuple<int, int, int> key) {
            const auto it = groups.find(key);
            if (it != groups.end()) {
                return it->second;
            }
            const int next = static_cast<int>(groups.size());
            groups.emplace(key, next);
            return next;
        };
        QString coord;
        switch (mode) {
            case TopologyColor::TpGroup:
                if (trainer) {
                    cell.colorKey = groupKey({t.pp, t.cp, t.dp});  // ranks that differ only in tp
                    coord = QStringLiteral("tp%1").arg(t.tp);
                }
                break;
            case TopologyColor::PpStage:
                if (trainer) {
                    cell.colorKey = t.pp;
                    coord = QStringLiteral("pp%1").arg(t.pp);
                }
                break;
            case TopologyColor::EpGroup:
                if (trainer) {
                    cell.colorKey = groupKey({t.pp, t.expertDp, t.etp});  // differ only in ep
                    coord = QStringLiteral("ep%1").arg(t.ep);
                }
                break;
            case TopologyColor::DpRank:
                if (trainer) {
                    cell.colorKey = t.dp;
                    coord = QStringLiteral("dp%1").arg(t.dp);
                }
                break;
            case TopologyColor::Engine:
                if (engine) {
                    cell.colorKey = e.engine;
                    coord = QStringLiteral("E%1.%2").arg(e.engine).arg(e.rank);
                }
                break;
        }
        if (mode != TopologyColor::Engine && engine) {
            cell.engine = e.engine;  // stripe: this GPU also serves an engine shard
        }
        if (mode == TopologyColor::Engine) {
            cell.text = coord.isEmpty()
                            ? (trainer ? QStringLiteral("r%1").arg(t.rank) : QStringLiteral("idle"))
                            : coord;
        } else {
            cell.text =
                trainer ? QStringLiteral("r%1 %2").arg(t.rank).arg(coord)
                        : (engine ? QStringLiteral("E%1").arg(e.engine) : QStringLiteral("idle"));
        }
        QString tip = QStringLiteral("node %1, GPU %2 (global %3)")
                          .arg(s.node)
                          .arg(s.localGpu)
                          .arg(s.globalGpu);
        if (trainer) {
            tip += QStringLiteral(
                       "\ntrainer rank %1: tp %2, pp %3, cp %4, dp %5, ep %6, etp %7, expert-dp %8")
                       .arg(t.rank)
                       .arg(t.tp)
                       .arg(t.pp)
                       .arg(t.cp)
                       .arg(t.dp)
                       .arg(t.ep)
                       .arg(t.etp)
                       .arg(t.expertDp);
        }
        if (engine) {
            tip += QStringLiteral("\nrollout engine %1, rank %2: tp %3, dp %4, ep %5, pp %6")
                       .arg(e.engine)
                       .arg(e.rank)
                       .arg(e.tp)
                       .arg(e.dp)
                       .arg(e.ep)
                       .arg(e.pp);
        }
        if (!trainer && !engine) {
            tip += QStringLiteral("\nidle: no trainer rank, no engine");
        }
        cell.tooltip = tip;
        data.cells.push_back(std::move(cell));
    }
    for (size_t n = 0; n < data.mixedNodes.size(); ++n) {
        data.mixedNodes[n] = hasTrainer[n] && hasEngine[n];
    }
    data.legend =
        mode == TopologyColor::Engine
            ? QStringLiteral("colour: rollout engine (E<engine>.<rank in engine>); grey: no engine")
            : QStringLiteral(
                  "colour: %1 (grey: no trainer rank); bottom stripe: the GPU also serves a "
                  "rollout "
                  "engine shard; orange frame \"T+E\": the node hosts both")
                  .arg(toString(mode));
    return data;
}

}  // namespace runplane::gui
