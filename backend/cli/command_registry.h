#pragma once
// Each command group of runplanectl lives in its own `*_commands.cpp` file, compiled straight into
// the executable, and registers itself at static-initialisation time through this registry, so
// that groups owned by different libraries never edit a shared file.

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace runplane::cli {

/// Shared state for a single runplanectl invocation. A command's callback stores its exit status
/// in exitCode (0 = success, 1 = findings/errors, 2 = usage or I/O error).
struct CliContext {
    int exitCode = 0;
};

using CommandAdder = std::function<void(CLI::App& app, CliContext& context)>;

/// Registers a command group; call from a namespace-scope initialiser in a *_commands.cpp file.
bool registerCommands(CommandAdder adder);

/// All registered groups, in registration order (which is link order).
const std::vector<CommandAdder>& registeredCommands();

/// Adds every registered group to `app`; its --help lists the commands in sections in the order a
/// user works (design, run, watch, history, cluster: helpSections() in command_registry.cpp),
/// whatever order the groups were linked in. A command the table does not name goes last, under
/// "Other commands".
void addRegisteredCommands(CLI::App& app, CliContext& context);

}  // namespace runplane::cli
