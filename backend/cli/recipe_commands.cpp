// `runplanectl argv FILE`: the argv a recipe's launcher hands to the daemon, so that scripts (the
// demo, CI) can submit a recipe without re-stating its flags.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "backend/cli/command_registry.h"
#include "backend/plan/recipe.h"

namespace runplane::cli {
namespace {

struct ArgvOptions {
    std::string file;
    bool nulSeparated = false;
};

int printLauncherArgv(const ArgvOptions& options) {
    Result<plan::Recipe> recipe = plan::loadRecipe(options.file);
    if (!recipe.ok()) {
        std::cerr << recipe.error() << "\n";
        return 2;
    }
    if (plan::effectiveLauncher(*recipe) != plan::LauncherKind::Command ||
        recipe->launcher.argv.empty()) {
        std::cerr << options.file
                  << ": launcher: only a recipe with launcher.kind 'command' and a non-empty "
                     "launcher.argv has a direct argv (use `runplanectl export` for scripts)\n";
        return 2;
    }
    for (const std::string& arg : recipe->launcher.argv) {
        std::cout << arg << (options.nulSeparated ? '\0' : '\n');
    }
    return 0;
}

const bool kRecipeGroup = registerCommands([](CLI::App& app, CliContext& context) {
    auto options = std::make_shared<ArgvOptions>();
    CLI::App* cmd = app.add_subcommand("argv", "Print a recipe's launcher argv, one per line");
    cmd->add_option("FILE", options->file, "recipe YAML file")->required();
    cmd->add_flag("-0,--null", options->nulSeparated, "separate arguments with NUL bytes");
    cmd->callback([options, &context] {
        try {
            context.exitCode = printLauncherArgv(*options);
        } catch (const std::exception& e) {
            std::cerr << "runplanectl: " << options->file << ": internal error: " << e.what()
                      << "\n";
            context.exitCode = 2;
        }
    });
});

}  // namespace
}  // namespace runplane::cli
