#pragma once
// Private state of History shared by its translation units (history*.cpp).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "db/history/history.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

struct History::Impl {
    std::unique_ptr<sqlite::Database> db;
    // Statements prepared once on first use (the hot ingest path).
    sqlite::Statement selectCursor;
    sqlite::Statement upsertCursor;
    sqlite::Statement selectSeries;
    sqlite::Statement insertSeries;
    sqlite::Statement insertSample;
    sqlite::Statement insertEvent;
    sqlite::Statement upsertRollup;
    bool ingestPrepared = false;
    // (node, run, name) -> series id; entries created in a rolled-back transaction are removed.
    std::unordered_map<std::string, std::int64_t> seriesIds;

    Status prepareIngest();
};

/// Key of Impl::seriesIds.
std::string seriesKey(const std::string& nodeId, const std::string& runId, const std::string& name);

/// Current time as Unix nanoseconds.
std::int64_t nowNs();

}  // namespace runplane::db
