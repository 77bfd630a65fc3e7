#pragma once
// Whether a running run's telemetry still arrives (issue 46). A run the history calls "running"
// whose nodes sent no sample for longer than the gap rule's threshold (series_gaps.h:
// kGapIntervals x the sample interval, at least kMinSilentSeconds) is not shown as plainly
// running: its header says "running · daemon unreachable since HH:MM" (docs/gui.md "Gaps,
// stale values, unreachable daemons"). Only the history is read: the samples stop reaching it
// exactly when no daemon of the run can be reached (or the daemon stopped).

#include <QString>

#include <optional>

#include "gui/models/run_data.h"
#include "gui/models/run_silence.h"

namespace runplane::gui {

/// For a running run whose snapshot reaches up to `now`: the time of its newest node sample
/// (its start when there is none) when that is longer ago than the threshold; else nothing.
std::optional<double> telemetrySilentSince(const RunSnapshot& snapshot, double now);

/// The run's state in words as its header shows it: "running", "finished", ... or
/// "running · daemon unreachable since HH:MM" (local time).
QString liveStateText(const RunSnapshot& snapshot, double now);

}  // namespace runplane::gui
