#include "backend/control/text_format.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace runplane::control {

namespace {
std::tm localTm(std::int64_t unixNs) {
    const std::time_t seconds = static_cast<std::time_t>(unixNs / 1'000'000'000);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    return tm;
}
}  // namespace

std::string formatLocalTime(std::int64_t unixNs) {
    if (unixNs == 0) {
        return "-";
    }
    const std::tm tm = localTm(unixNs);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

std::string formatTimeOfDay(std::int64_t unixNs) {
    const std::tm tm = localTm(unixNs);
    char text[32];
    std::strftime(text, sizeof text, "%H:%M:%S", &tm);
    char out[48];
    std::snprintf(out, sizeof out, "%s.%03d", text, static_cast<int>((unixNs / 1'000'000) % 1000));
    return out;
}

std::string fitCell(const std::string& text, bool wide) {
    if (wide || text.size() <= kTableCellWidth) {
        return text;
    }
    return text.substr(0, kTableCellWidth - 3) + "...";
}

std::string formatTable(const std::vector<std::vector<std::string>>& rows, bool wide) {
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> widths;
    for (const auto& row : rows) {
        cells.emplace_back();
        widths.resize(std::max(widths.size(), row.size()), 0);
        for (std::size_t i = 0; i < row.size(); ++i) {
            cells.back().push_back(fitCell(row[i], wide));
            widths[i] = std::max(widths[i], cells.back().back().size());
        }
    }
    std::string out;
    for (const auto& row : cells) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            out += row[i];
            if (i + 1 < row.size()) {
                out += std::string(widths[i] - row[i].size() + 2, ' ');
            }
        }
        out += '\n';
    }
    return out;
}

std::string progressBar(double fraction, int width) {
    width = std::max(width, 1);
    const double f = std::isnan(fraction) ? 0.0 : std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(f * width);
    return "[" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(width - filled), ' ') + "]";
}

bool canRedraw(int fd) {
    if (isatty(fd) != 1) {
        return false;
    }
    const char* term = std::getenv("TERM");
    return term == nullptr || std::strcmp(term, "dumb") != 0;
}

}  // namespace runplane::control
