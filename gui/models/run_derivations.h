#pragma once
// What the GUI derives about a run from values already read: phases from its events, time above a
// line, the memory lines of its recipe's plan, labels. Nothing here reads the history (that is
// history_queries'), so these are tested and reused on plain values. Formulas in docs/gui.md.

#include <QString>

#include <vector>

#include "db/history/history.h"
#include "gui/models/run_data.h"
#include "gui/models/series_data.h"

namespace runplane::plan {
class ModelCatalog;
}

namespace runplane::gui {

/// Phases from PHASE events (attrs.phase); each lasts until the node's next phase event, "done",
/// or endT. Only the first node that reports phases is used, so spans never overlap.
std::vector<PhaseInterval> phasesFromEvents(const std::vector<db::EventRecord>& events,
                                            double endT);

/// Seconds during which the series' value (last reading of each interval) exceeds `threshold`:
/// sum over points i with value_i > threshold of min(t_{i+1} - t_i, 2 * median spacing); the
/// last point counts the median spacing.
double secondsAbove(const PointSeries& series, double threshold);

/// The phase in force at time t, or "".
QString phaseAt(const std::vector<PhaseInterval>& phases, double t);

/// Lines for host-memory plots, about this run (docs/gui.md): RAM (measured, else the recipe's
/// hardware.host_ram_gb) as a reference; with a catalog and a resolvable recipe, the plan's
/// per-node peak per phase and the band between the lowest and highest non-load phase peak;
/// the alarm is the daemon's threshold (daemonAlarmBytes, from its memory_alarm events), else
/// the plan's. No recipe and no daemon alarm: RAM only (no fractions of RAM are invented).
MemoryLines memoryLinesFromRecipe(const QString& recipeYaml, double ramBytes,
                                  const plan::ModelCatalog* catalog = nullptr,
                                  double daemonAlarmBytes = 0);

/// The model catalog found next to the executable or in the source tree
/// (plan::locateRecipesDir), loaded once on first use from any thread; nullptr if none.
const plan::ModelCatalog* defaultModelCatalog();

/// "2.28.9" -> 22809 (ncclGetVersion's encoding since 2.9); 0 when not a version.
int ncclVersionCode(const QString& version);

/// A short label for a recipe snapshot: its name, else its model name, else "".
QString recipeLabel(const QString& recipeYaml);

}  // namespace runplane::gui
