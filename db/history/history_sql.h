#pragma once
// `runplanectl history sql "SELECT ..."` (issue 49, docs/history.md "Querying the history in
// SQL"): one SELECT / WITH statement over the history, opened read-only, with documented views
// over runs, series, points and events.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace runplane::db {

struct SqlQueryOptions {
    std::size_t maxRows = 10000;  // rows past it are not read (truncated = true)
    int timeoutMs = 30000;        // the statement is interrupted past it
};

struct SqlQueryResult {
    std::vector<std::string> columns;
    /// Per row one value per column: null, integer, real, text; a blob as "<blob N bytes>".
    std::vector<std::vector<nlohmann::json>> rows;
    bool truncated = false;
};

/// The views every query can read (name, what it holds), created as TEMP views on the
/// read-only connection; the documented table in docs/history.md is this list.
struct SqlView {
    const char* name;
    const char* sql;
    const char* what;
};
const std::vector<SqlView>& sqlViews();

/// Runs `sql` on the history at `path` opened with SQLITE_OPEN_READONLY. Only one statement, and
/// only a SELECT or WITH that SQLite itself calls read-only (sqlite3_stmt_readonly), runs;
/// anything else is refused before it is stepped, naming why. Errors name the path.
Result<SqlQueryResult> queryHistorySql(const std::string& path, const std::string& sql,
                                       const SqlQueryOptions& options = {});

}  // namespace runplane::db
