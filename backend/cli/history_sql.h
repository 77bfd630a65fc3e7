#pragma once
// runplanectl history sql "SELECT ...": read-only SQL over the history (docs/history.md,
// "Querying the history in SQL").

namespace CLI {
class App;
}

namespace runplane::cli {
struct CliContext;
void addSqlCommand(CLI::App& history, CliContext& context);
}  // namespace runplane::cli
