#include "gui/widgets/plot_hover.h"

#include <QCoreApplication>
#include <QDateTime>

#include <algorithm>

namespace runplane::gui {

namespace {

QString formatValue(double v) {
    return QString::number(v, 'g', 4);
}

QString formatX(XAxisKind kind, double x) {
    switch (kind) {
        case XAxisKind::WallClock:
            return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(x * 1000))
                .toString(QStringLiteral("HH:mm:ss"));
        case XAxisKind::ElapsedSeconds:
            return QStringLiteral("%1 s").arg(formatValue(x));
        case XAxisKind::Number:
            break;
    }
    return QString::number(x, 'g', 10);
}

}  // namespace

QString plotHoverText(const std::vector<PlotSeries>& series, XAxisKind kind, const QString& xLabel,
                      double key, int maxLines) {
    QString text = formatX(kind, key);
    if (kind == XAxisKind::Number && !xLabel.isEmpty()) {
        text = xLabel + QLatin1Char(' ') + text;
    }
    int lines = 0;
    for (const PlotSeries& s : series) {
        if (s.t.empty() || s.faint || lines >= maxLines) {
            continue;
        }
        // Inside a gap nothing was measured: say so instead of the nearest point's value.
        const bool inGap = std::any_of(s.gaps.begin(), s.gaps.end(), [&](const auto& g) {
            return g.first < key && key < g.second;
        });
        if (inGap) {
            text += QLatin1Char('\n') + s.name + QStringLiteral(": ") +
                    QCoreApplication::translate("TimeSeriesPlot", "no data");
            ++lines;
            continue;
        }
        auto it = std::lower_bound(s.t.begin(), s.t.end(), key);
        if (it == s.t.end()) {
            --it;
        } else if (it != s.t.begin() && (key - *(it - 1)) < (*it - key)) {
            --it;
        }
        const auto i = static_cast<size_t>(it - s.t.begin());
        text += QLatin1Char('\n') + s.name;
        if (kind == XAxisKind::Number) {
            text += QStringLiteral(" @ ") + formatX(kind, s.t[i]);
        }
        text += QStringLiteral(": ");
        if (s.raw.size() == s.t.size()) {
            text += QCoreApplication::translate("TimeSeriesPlot", "smoothed %1, raw %2")
                        .arg(formatValue(s.value[i]), formatValue(s.raw[i]));
        } else {
            text += formatValue(s.value[i]);
        }
        if (s.hasBand() && s.min[i] != s.max[i]) {
            text += QStringLiteral("  [") + formatValue(s.min[i]) + QStringLiteral(" – ") +
                    formatValue(s.max[i]) + QStringLiteral("]");
        }
        ++lines;
    }
    return text;
}

}  // namespace runplane::gui
