#include "gui/widgets/palette.h"

#include <array>

namespace runplane::gui {

namespace {
constexpr std::array<QRgb, 12> kSeries = {
    0x0072B2,  // blue
    0xD55E00,  // vermillion
    0x009E73,  // bluish green
    0xCC79A7,  // reddish purple
    0xE69F00,  // orange
    0x56B4E9,  // sky blue
    0x000000,  // black
    0xB8A000,  // dark yellow (F0E442 is too light on white)
    0x7F3C8D,  // purple
    0x11A579,  // teal
    0x80BA5A,  // green
    0x8C564B,  // brown
};
}  // namespace

QColor seriesColor(int index) {
    const int n = static_cast<int>(kSeries.size());
    const int i = ((index % n) + n) % n;
    return QColor::fromRgb(kSeries[static_cast<size_t>(i)]);
}

int seriesPaletteSize() {
    return static_cast<int>(kSeries.size());
}

QColor phaseColor(const QString& phase) {
    const QString p = phase.toLower();
    if (p.startsWith(QLatin1String("rollout"))) {
        return QColor(86, 180, 233, 45);  // light blue
    }
    if (p.startsWith(QLatin1String("train"))) {
        return QColor(230, 159, 0, 45);  // light orange
    }
    if (p.contains(QLatin1String("sync"))) {
        return QColor(204, 121, 167, 60);  // light purple
    }
    if (p.startsWith(QLatin1String("load"))) {
        return QColor(0, 158, 115, 40);  // light green
    }
    if (p.startsWith(QLatin1String("eval"))) {
        return QColor(120, 120, 120, 40);
    }
    return QColor(160, 160, 160, 30);
}

QColor errorColor() {
    return QColor(0xC6, 0x28, 0x28);
}
QColor warningColor() {
    return QColor(0xE0, 0x8A, 0x00);
}
QColor okColor() {
    return QColor(0x2E, 0x7D, 0x32);
}

}  // namespace runplane::gui
