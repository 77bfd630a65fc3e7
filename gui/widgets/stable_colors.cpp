#include "gui/widgets/stable_colors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "gui/widgets/palette.h"

namespace runplane::gui {

namespace {

int slotCount() {
    return 2 * seriesPaletteSize();
}

double linear(double channel) {
    return channel <= 0.04045 ? channel / 12.92 : std::pow((channel + 0.055) / 1.055, 2.4);
}

}  // namespace

int stableSlot(const QString& key) {
    std::uint32_t h = 2166136261U;
    for (const char byte : key.toUtf8()) {
        h ^= static_cast<std::uint8_t>(byte);
        h *= 16777619U;
    }
    return static_cast<int>(h % static_cast<std::uint32_t>(slotCount()));
}

QColor slotColor(int slot) {
    const int n = seriesPaletteSize();
    const int s = ((slot % (2 * n)) + 2 * n) % (2 * n);
    QColor c = seriesColor(s % n);
    return s >= n ? c.lighter(150) : c;
}

std::vector<QColor> stableColors(const QStringList& keys) {
    std::vector<int> order(static_cast<size_t>(keys.size()));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] < keys[b]; });
    std::vector<bool> taken(static_cast<size_t>(slotCount()), false);
    std::vector<QColor> out(static_cast<size_t>(keys.size()));
    for (const int i : order) {
        int slot = stableSlot(keys[i]);
        for (int tries = 0; tries < slotCount() && taken[static_cast<size_t>(slot)]; ++tries) {
            slot = (slot + 1) % slotCount();
        }
        taken[static_cast<size_t>(slot)] = true;
        out[static_cast<size_t>(i)] = slotColor(slot);
    }
    return out;
}

double relativeLuminance(const QColor& c) {
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

QColor textColorOn(const QColor& background) {
    const QColor dark(20, 20, 20);
    const QColor light(250, 250, 250);
    const double bg = relativeLuminance(background);
    const double onDark = (bg + 0.05) / (relativeLuminance(dark) + 0.05);
    const double onLight = (relativeLuminance(light) + 0.05) / (bg + 0.05);
    return onDark >= onLight ? dark : light;
}

}  // namespace runplane::gui
