#include "backend/cli/history_sql.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "db/history/history_sql.h"

namespace runplane::cli {
namespace {

struct SqlOptions {
    std::string history;
    std::string sql;
    bool json = false;
    bool views = false;
    std::size_t maxRows = 10000;
    int timeoutS = 30;
};

std::string cellText(const nlohmann::json& v) {
    if (v.is_null()) {
        return "NULL";
    }
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        std::replace(s.begin(), s.end(), '\n', ' ');
        return s;
    }
    return v.dump();
}

/// Display width of UTF-8 text: its code points (no wide-glyph table; good enough for a table).
std::size_t width(const std::string& s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

void runSql(const SqlOptions& o, CliContext& context) {
    if (o.views) {
        for (const auto& v : db::sqlViews()) {
            std::cout << v.name << ": " << v.what << "\n  " << v.sql << "\n";
        }
        return;
    }
    if (o.sql.empty()) {
        std::cerr << "runplanectl history sql: give a SELECT or WITH statement (or --views)\n";
        context.exitCode = 2;
        return;
    }
    db::SqlQueryOptions q;
    q.maxRows = o.maxRows;
    q.timeoutMs = o.timeoutS * 1000;
    auto result = db::queryHistorySql(o.history, o.sql, q);
    if (!result.ok()) {
        std::cerr << "runplanectl history sql: " << result.error() << "\n";
        context.exitCode = 1;
        return;
    }
    if (o.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& r : result->rows) {
            nlohmann::json obj = nlohmann::json::object();
            for (std::size_t i = 0; i < r.size(); ++i) {
                obj[result->columns[i]] = r[i];
            }
            rows.push_back(std::move(obj));
        }
        nlohmann::json out{{"columns", result->columns},
                           {"rows", std::move(rows)},
                           {"truncated", result->truncated}};
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return;
    }
    // Aligned text: one column per result column, numbers right-aligned.
    const std::size_t n = result->columns.size();
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> widths(n, 0);
    std::vector<bool> numeric(n, true);
    for (std::size_t i = 0; i < n; ++i) {
        widths[i] = width(result->columns[i]);
    }
    for (const auto& r : result->rows) {
        std::vector<std::string> line;
        for (std::size_t i = 0; i < n; ++i) {
            line.push_back(cellText(r[i]));
            widths[i] = std::max(widths[i], width(line.back()));
            if (!r[i].is_number() && !r[i].is_null()) {
                numeric[i] = false;
            }
        }
        cells.push_back(std::move(line));
    }
    auto print = [&](const std::vector<std::string>& line, bool header) {
        std::string text;
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t pad = widths[i] - width(line[i]);
            const bool right = numeric[i] && !header;
            if (i > 0) {
                text += "  ";
            }
            if (right) {
                text += std::string(pad, ' ') + line[i];
            } else {
                text += line[i] + (i + 1 < n ? std::string(pad, ' ') : "");
            }
        }
        std::cout << text << "\n";
    };
    print(result->columns, true);
    for (const auto& line : cells) {
        print(line, false);
    }
    std::cerr << result->rows.size() << (result->rows.size() == 1 ? " row" : " rows")
              << (result->truncated ? " (stopped at --max-rows; more rows match)" : "") << "\n";
}

}  // namespace

void addSqlCommand(CLI::App& history, CliContext& context) {
    auto o = std::make_shared<SqlOptions>();
    auto* cmd = history.add_subcommand(
        "sql",
        "Run one read-only SELECT / WITH over the history (views v_runs, v_series, "
        "v_points, v_events)");
    o->history = runplane::control::defaultHistoryPath();
    cmd->add_option("--history", o->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    cmd->add_option("query", o->sql, "The SELECT or WITH statement");
    cmd->add_flag("--json", o->json, "Print JSON: {columns, rows: [{column: value}], truncated}");
    cmd->add_flag("--views", o->views, "List the views and their SQL");
    cmd->add_option("--max-rows", o->maxRows, "Read at most this many rows")->capture_default_str();
    cmd->add_option("--timeout", o->timeoutS, "Stop the query after this many seconds")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
    cmd->callback([o, &context] { runSql(*o, context); });
}

}  // namespace runplane::cli
