#pragma once
// The last output per role (issue #44, docs/diagnosis.md "Last output per role"): from the run's
// output tail, each role's last line and how long ago it was printed, so a stall's evidence says
// "trainer: last line 14 min ago; rollout: 2 s ago". Pure: the daemon supplies the lines, the
// stream's last-write time and how a line's process maps to a role (its role walk's table).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace runplane::diagnosis {

/// Who printed a line, from its prefix: Ray's log monitor writes `(Actor pid=N, ip=X) ` before a
/// worker's lines (`(raylet) `, `(gcs_server) ` for its own); torchrun `[rankN]: `.
struct LinePrefix {
    std::string actor;  // "MegatronTrainRayActor", "raylet", "" when none
    std::int64_t pid = -1;
    std::string ip;
    std::int64_t rank = -1;
};
LinePrefix linePrefix(std::string_view line);

/// The time a line carries itself, `YYYY-MM-DD HH:MM:SS` in its first 96 bytes (slime/miles
/// `[2025-12-17 14:10:28]`, SGLang `[2026-05-21 16:07:41 DP6 TP6]`, Python logging `2024-01-02
/// 03:04:05,678`), read as the node's local time; 0 when it has none.
std::int64_t lineTimeUnixNs(std::string_view line);

/// One stream's tail: its lines, oldest first, and when the stream was last written (its
/// file's mtime; 0 unknown): the time of its last line.
struct StreamTail {
    std::string name;  // "stdout", "stderr"
    std::vector<std::string> lines;
    std::int64_t lastWriteUnixNs = 0;
};

/// One role's last line.
struct RoleOutput {
    std::string role;    // trainer, rollout, router, ray, driver, a site's own
    std::string source;  // "MegatronTrainRayActor pid 812", "rank 3", "the run's own output"
    std::string stream;  // stdout / stderr
    std::string line;
    std::int64_t tUnixNs = 0;  // 0: not known
    /// "line" (its own timestamp), "stream" (the stream's last write: it is the stream's last
    /// line), "earlier_line" (a line of the role before it in the stream carried this time: at
    /// most this long ago), "" (unknown).
    std::string timeFrom;
};

/// Maps a line's prefix to a role ("" for none: the line counts as the run's own process's,
/// `defaultRole`).
using RoleOfPrefix = std::function<std::string(const LinePrefix&)>;

/// Each role's last line over the streams (the newest by time where both are known, else the
/// later in its stream), roles in the order first seen.
std::vector<RoleOutput> lastOutputPerRole(const std::vector<StreamTail>& streams,
                                          const RoleOfPrefix& roleOf,
                                          const std::string& defaultRole = "driver");

/// "14 min", "2 s", "3 h 5 min".
std::string ageText(std::int64_t seconds);

/// "trainer: `Timer actor_train start` 14 min ago; rollout: `...` 2 s ago" relative to nowNs;
/// a role whose time is unknown says "(time unknown)". Lines cut at 80 bytes.
std::string lastOutputText(const std::vector<RoleOutput>& roles, std::int64_t nowNs);

nlohmann::json toJson(const std::vector<RoleOutput>& roles);
std::vector<RoleOutput> roleOutputsFromJson(const nlohmann::json& j);

}  // namespace runplane::diagnosis
