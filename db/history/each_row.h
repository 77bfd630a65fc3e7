#pragma once
// The row loop of a history query (internal to runplane_db): step a prepared statement to its
// end, handing each row to a callback; the first step error is returned. Used where a query
// reads a list (run_lineage, run_diagnoses) instead of repeating the step / done / error loop.

#include <utility>

#include "common/result.h"
#include "db/sqlite/sqlite.h"

namespace runplane::db {

/// Calls onRow(q) for every row q yields (the columns are read from q inside onRow).
template <class OnRow>
Status eachRow(sqlite::Statement& q, OnRow&& onRow) {
    for (;;) {
        auto row = q.step();
        if (!row.ok()) {
            return row.failure();
        }
        if (!*row) {
            return {};
        }
        std::forward<OnRow>(onRow)(q);
    }
}

}  // namespace runplane::db
