#pragma once
// Value types the plot widgets draw. Plain data: built on any thread, handed to the GUI thread
// by value or as shared_ptr<const T>. No QCustomPlot here (it stays inside widgets/*.cpp).

#include <QColor>
#include <QString>

#include <utility>
#include <vector>

namespace runplane::gui {

/// One curve. `value` is the line; when `min`/`max` have the same length as `t`, the
/// min–max band of each interval (decimation bucket) is filled behind the line.
struct PlotSeries {
    enum class Style { Line, Points, StepLine };
    QString name;
    QColor color;
    std::vector<double> t;  // x: seconds since the epoch, seconds, or steps (see XAxisKind)
    std::vector<double> value;
    std::vector<double> min;  // optional band, same length as t
    std::vector<double> max;
    std::vector<double> raw = {};  // optional, same length as t: unsmoothed values (hover)
    Style style = Style::Line;
    bool faint = false;  // drawn translucent (e.g. raw points under an EMA)
    bool inLegend = true;
    double lineWidth = 1.6;
    bool antialiased = true;  // false: aliased 1 px strokes (dense plots of hundreds of lines)
    /// Open x-intervals without data (series_gaps.h): the line breaks there and hovering inside
    /// one says "no data", never a value read off a line drawn across it.
    std::vector<std::pair<double, double>> gaps = {};

    bool hasBand() const {
        return !min.empty() && min.size() == t.size() && max.size() == t.size();
    }
};

/// A horizontal reference line, e.g. host RAM (956 GB) or the sustained alarm line (750 GB).
struct AlarmLine {
    QString label;
    double y = 0;
    QColor color;
    bool dashed = true;
    bool labelLeft = false;  // label at the left end (when two lines are close together)
    bool scalesAxis = true;  // false: a reference only; the y range follows the data without it
};

/// A shaded x-interval behind the curves, e.g. a rollout / train / weight-sync phase.
struct PhaseSpan {
    QString phase;
    double t0 = 0;
    double t1 = 0;
};

/// A vertical marker at an instant, e.g. an alarm or an NCCL warning.
struct EventMarker {
    double t = 0;
    QString label;
    QColor color;
};

/// How the x values are labelled.
enum class XAxisKind { WallClock, ElapsedSeconds, Number };

}  // namespace runplane::gui
