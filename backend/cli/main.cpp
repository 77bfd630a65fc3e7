// runplanectl: Runplane's command line. Every command group registers itself (command_registry.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "backend/cli/command_registry.h"
#include "backend/cli/usage_errors.h"
#include "common/build_info.h"

int main(int argc, char** argv) {
    CLI::App app{"runplanectl - design, validate, dispatch and watch RL post-training runs"};
    app.require_subcommand(1);
    app.set_version_flag("--version", runplane::versionLine("runplanectl"));
    runplane::cli::CliContext context;
    runplane::cli::addRegisteredCommands(app, context);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return runplane::cli::reportParseError(app, e, std::cout, std::cerr);
    }
    return context.exitCode;
}
