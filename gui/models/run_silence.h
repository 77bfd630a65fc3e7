#pragma once
// When a running run's telemetry has stopped (issue 46): one rule for the Runs list and the run
// header (gui/pages/run_liveness.h), so the two never disagree. A run the history calls
// "running" whose nodes sent no sample for longer than kSilentIntervals x their sample interval
// (at least kMinSilentSeconds) is "running · daemon unreachable since HH:MM" (docs/gui.md "Gaps,
// stale values, unreachable daemons").

#include <QString>

#include <optional>

#include <vector>

#include "common/telemetry/run_state.h"
#include "gui/models/run_data.h"

namespace runplane::db {
class History;
}

namespace runplane::gui {

/// Never call a run silent after fewer seconds than this (a slow telemetry rate, a live refresh).
inline constexpr double kMinSilentSeconds = 10;
/// The gap rule's factor (series_gaps.h kGapIntervals; run_liveness.cpp checks they agree).
inline constexpr double kSilentIntervals = 3.0;

/// What the rule needs of a run: its state, start, newest node sample and sample interval (s).
struct RunTelemetryClock {
    telemetry::RunState state = telemetry::RunState::Running;
    double startT = 0;
    double lastSampleT = 0;     // 0: no sample yet
    double sampleInterval = 0;  // 0: unknown
};

/// For a running run: the time of its newest sample (its start when there is none) when that is
/// longer ago than the threshold; else nothing.
std::optional<double> silentSince(const RunTelemetryClock& clock, double now);

/// "running", "finished", ... or "running · daemon unreachable since HH:MM" (local time).
/// `state` is the state's words as the caller shows them.
QString liveText(const QString& state, const RunTelemetryClock& clock, double now);

/// A run list row's clock (its lastSampleT and sampleInterval).
RunTelemetryClock clockOf(const RunRow& row);

/// Fills lastSampleT and sampleInterval of the running rows from one listing of the nodes'
/// host-memory series (their newest sample, and (last − first) / (count − 1) as the interval).
void fillTelemetryClocks(db::History& history, std::vector<RunRow>& rows);

}  // namespace runplane::gui
