#pragma once
// `runplanectl runs tag RUN TAG [--remove]` and `runplanectl runs note RUN TEXT` (issue 49):
// tags and notes on runs in the history (docs/history.md "Run tags and notes").

namespace CLI {
class App;
}

namespace runplane::cli {

struct CliContext;

/// Adds `tag` and `note` under the `runs` command.
void addRunAnnotationCommands(CLI::App& runs, CliContext& context);

}  // namespace runplane::cli
