// Read-only SQL over the history (history_sql.h, docs/history.md "Querying the history in SQL").
#include "db/history/history_sql.h"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>

#include "db/history/chunks.h"

namespace runplane::db {
namespace {

struct CloseDb {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct FinalizeStmt {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

/// The first keyword of the text, upper-cased, after whitespace and SQL comments.
std::string firstKeyword(const std::string& sql) {
    std::size_t i = 0;
    while (i < sql.size()) {
        if (std::isspace(static_cast<unsigned char>(sql[i])) != 0) {
            ++i;
        } else if (sql.compare(i, 2, "--") == 0) {
            const std::size_t nl = sql.find('\n', i);
            i = nl == std::string::npos ? sql.size() : nl + 1;
        } else if (sql.compare(i, 2, "/*") == 0) {
            const std::size_t end = sql.find("*/", i + 2);
            i = end == std::string::npos ? sql.size() : end + 2;
        } else {
            break;
        }
    }
    std::string word;
    while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])) != 0) {
        word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i])));
        ++i;
    }
    return word;
}

/// Whether only whitespace, semicolons and comments remain.
bool onlyTrivia(const char* tail) {
    std::string rest(tail);
    std::size_t i = 0;
    while (i < rest.size()) {
        if (std::isspace(static_cast<unsigned char>(rest[i])) != 0 || rest[i] == ';') {
            ++i;
        } else if (rest.compare(i, 2, "--") == 0) {
            const std::size_t nl = rest.find('\n', i);
            i = nl == std::string::npos ? rest.size() : nl + 1;
        } else if (rest.compare(i, 2, "/*") == 0) {
            const std::size_t end = rest.find("*/", i + 2);
            i = end == std::string::npos ? rest.size() : end + 2;
        } else {
            return false;
        }
    }
    return true;
}

}  // namespace

const std::vector<SqlView>& sqlViews() {
    static const std::vector<SqlView> kViews{
        {"v_runs",
         "SELECT id AS run_id, name, status, started_ns, ended_ns, "
         "CASE WHEN ended_ns > 0 THEN (ended_ns - started_ns) / 1e9 END AS duration_s, "
         "coalesce(json_extract(provenance_json, '$.origin.format'), 'runplane') AS origin, "
         "pinned, message, recipe_yaml, provenance_json FROM runs",
         "one row per run; `origin` is `runplane` for launched runs, else the import format"},
        {"v_series",
         "SELECT s.id AS series_id, s.run_id, r.name AS run_name, s.node_id, s.name, s.unit "
         "FROM series s LEFT JOIN runs r ON r.id = s.run_id",
         "one row per series (node-level series have run_id '')"},
        {"v_points",
         "SELECT s.id AS series_id, s.run_id, s.node_id, s.name AS series, p.t_ns, p.step, "
         "p.value, p.min, p.max FROM series s JOIN samples p ON p.series_id = s.id",
         "every stored sample with its series' run, node and name (filter on run_id / series: "
         "each series is read through the chunk index)"},
        {"v_events",
         "SELECT id AS event_id, run_id, node_id, t_ns, kind, message, attrs_json FROM events",
         "every event (phases, alarms, gaps, exits, imports); attrs_json is one JSON object"},
    };
    return kViews;
}

Result<SqlQueryResult> queryHistorySql(const std::string& path, const std::string& sql,
                                       const SqlQueryOptions& options) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        return Error{path + ": no such history file"};
    }
    const std::string keyword = firstKeyword(sql);
    if (keyword != "SELECT" && keyword != "WITH") {
        return Error{
            "only SELECT or WITH statements run on the history (it is opened "
            "read-only); this one begins with " +
            (keyword.empty() ? std::string("no keyword") : keyword)};
    }
    registerSamplesView();
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::unique_ptr<sqlite3, CloseDb> db(raw);
    if (rc != SQLITE_OK) {
        return Error{path + ": " + (raw != nullptr ? sqlite3_errmsg(raw) : "cannot open")};
    }
    sqlite3_busy_timeout(db.get(), 5000);
    sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    {
        sqlite3_stmt* check = nullptr;
        if (sqlite3_prepare_v2(db.get(), "SELECT max(version) FROM schema_version", -1, &check,
                               nullptr) != SQLITE_OK) {
            const std::string why = sqlite3_errmsg(db.get());
            sqlite3_finalize(check);
            return Error{path + ": not a Runplane history (" + why + ")"};
        }
        sqlite3_finalize(check);
    }
    for (const SqlView& v : sqlViews()) {
        const std::string create = std::string("CREATE TEMP VIEW ") + v.name + " AS " + v.sql;
        char* err = nullptr;
        if (sqlite3_exec(db.get(), create.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            std::string why = err != nullptr ? err : "?";
            sqlite3_free(err);
            return Error{path + ": cannot create view " + v.name + ": " + why};
        }
    }
    sqlite3_stmt* rawStmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size()), &rawStmt, &tail) !=
        SQLITE_OK) {
        sqlite3_finalize(rawStmt);
        return Error{std::string("SQL error: ") + sqlite3_errmsg(db.get())};
    }
    std::unique_ptr<sqlite3_stmt, FinalizeStmt> stmt(rawStmt);
    if (!stmt) {
        return Error{"no statement"};
    }
    if (tail != nullptr && !onlyTrivia(tail)) {
        return Error{"one statement at a time: text follows the first statement's ';'"};
    }
    if (sqlite3_stmt_readonly(stmt.get()) == 0) {
        return Error{
            "the statement would write (SQLite does not call it read-only); only "
            "SELECT or WITH queries run on the history"};
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeoutMs);
    sqlite3_progress_handler(
        db.get(), 10000,
        [](void* arg) -> int {
            const auto* d = static_cast<const std::chrono::steady_clock::time_point*>(arg);
            return std::chrono::steady_clock::now() > *d ? 1 : 0;
        },
        const_cast<std::chrono::steady_clock::time_point*>(&deadline));
    SqlQueryResult out;
    const int n = sqlite3_column_count(stmt.get());
    for (int i = 0; i < n; ++i) {
        const char* name = sqlite3_column_name(stmt.get(), i);
        out.columns.emplace_back(name != nullptr ? name : "");
    }
    while (true) {
        const int step = sqlite3_step(stmt.get());
        if (step == SQLITE_DONE) {
            break;
        }
        if (step != SQLITE_ROW) {
            if (step == SQLITE_INTERRUPT) {
                return Error{"the query ran past its " + std::to_string(options.timeoutMs) +
                             " ms and was stopped"};
            }
            return Error{path + ": " + sqlite3_errmsg(db.get())};
        }
        if (out.rows.size() == options.maxRows) {
            out.truncated = true;
            break;
        }
        std::vector<nlohmann::json> row;
        row.reserve(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            switch (sqlite3_column_type(stmt.get(), i)) {
                case SQLITE_INTEGER:
                    row.emplace_back(
                        static_cast<std::int64_t>(sqlite3_column_int64(stmt.get(), i)));
                    break;
                case SQLITE_FLOAT:
                    row.emplace_back(sqlite3_column_double(stmt.get(), i));
                    break;
                case SQLITE_TEXT:
                    row.emplace_back(std::string(
                        reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), i)),
                        static_cast<std::size_t>(sqlite3_column_bytes(stmt.get(), i))));
                    break;
                case SQLITE_BLOB:
                    row.emplace_back(
                        "<blob " + std::to_string(sqlite3_column_bytes(stmt.get(), i)) + " bytes>");
                    break;
                default:
                    row.emplace_back(nullptr);
            }
        }
        out.rows.push_back(std::move(row));
    }
    return out;
}

}  // namespace runplane::db
