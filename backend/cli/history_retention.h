#pragma once
// runplanectl history prune / retention / pin / unpin (issue #23): the retention policy of the
// run history, applied on demand (docs/history.md, "Retention").

namespace CLI {
class App;
}

namespace runplane::cli {
struct CliContext;

/// Adds the retention subcommands to the `history` group.
void addRetentionCommands(CLI::App& group, CliContext& context);

}  // namespace runplane::cli
