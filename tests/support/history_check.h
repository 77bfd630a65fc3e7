#pragma once
// Reads a history file directly (raw SQL) to check what the ingest stored: every seq of a node
// exactly once, or inside an explicit gap event.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace runplane::testing {

struct Continuity {
    std::uint64_t firstSeq = 0;  // smallest stored seq
    std::uint64_t cursor = 0;    // ingest_cursor.last_seq
    std::int64_t rows = 0;       // sample + event rows carrying a daemon seq
    std::int64_t distinctSeqs = 0;
    std::int64_t hostSamples = 0;                               // host.mem.used_bytes samples
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;  // from gap events
    std::vector<std::uint64_t> missing;  // in [firstSeq, cursor], neither stored nor in a gap
    std::string error;
};

Continuity checkContinuity(const std::string& historyPath, const std::string& nodeId);

/// A single integer from a query on the file ("" error -> -1).
std::int64_t queryInt(const std::string& historyPath, const std::string& sql);

}  // namespace runplane::testing
