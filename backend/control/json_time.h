#pragma once
// Two small helpers the control library's history writers share (not part of its public API).

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace runplane::control::detail {

/// Unix time in nanoseconds (the history's clock).
inline std::int64_t unixNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// Compact JSON that never throws on invalid UTF-8 (bytes from logs and argv are replaced).
inline std::string dumpJson(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace runplane::control::detail
