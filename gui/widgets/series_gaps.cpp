#include "gui/widgets/series_gaps.h"

#include <algorithm>
#include <cstddef>

namespace runplane::gui {

double sampleInterval(const std::vector<double>& t) {
    if (t.size() < 3) {
        return 0;
    }
    std::vector<double> d;
    d.reserve(t.size() - 1);
    for (size_t i = 1; i < t.size(); ++i) {
        d.push_back(t[i] - t[i - 1]);
    }
    auto mid = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2);
    std::nth_element(d.begin(), mid, d.end());
    return *mid;
}

std::vector<std::pair<double, double>> findGaps(const std::vector<double>& t,
                                                const std::vector<double>& breaks,
                                                double intervals) {
    std::vector<std::pair<double, double>> gaps;
    if (t.size() < 2) {
        return gaps;
    }
    const double interval = sampleInterval(t);
    std::vector<double> sortedBreaks = breaks;
    std::sort(sortedBreaks.begin(), sortedBreaks.end());
    auto b = sortedBreaks.begin();
    for (size_t i = 1; i < t.size(); ++i) {
        const double a = t[i - 1];
        const double c = t[i];
        bool gap = interval > 0 && c - a > intervals * interval;
        while (b != sortedBreaks.end() && *b <= a) {
            ++b;
        }
        if (b != sortedBreaks.end() && *b <= c) {
            gap = true;
        }
        if (gap && c > a) {
            gaps.emplace_back(a, c);
        }
    }
    return gaps;
}

}  // namespace runplane::gui
