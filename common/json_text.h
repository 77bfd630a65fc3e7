#pragma once
// JSON text as every writer of the history, the spool and the CLI's -o json dumps it.
// Header-only (library runplane_json_text, which brings nlohmann-json).

#include <string>

#include <nlohmann/json.hpp>

namespace runplane::json_text {

/// Compact JSON that never throws on invalid UTF-8 (bytes from logs and argv are replaced).
inline std::string dump(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace runplane::json_text
