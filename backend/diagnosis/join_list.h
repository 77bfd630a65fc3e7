#pragma once
// Lists in a diagnosis's sentences: the first `shown` items, then "and N more".

#include <cstddef>
#include <string>
#include <vector>

namespace runplane::diagnosis {

inline std::string joinList(const std::vector<std::string>& items, std::size_t shown = 8) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < shown; ++i) {
        out += (i ? ", " : "") + items[i];
    }
    if (items.size() > shown) {
        out += " and " + std::to_string(items.size() - shown) + " more";
    }
    return out;
}

}  // namespace runplane::diagnosis
