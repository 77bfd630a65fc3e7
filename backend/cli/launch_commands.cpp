// runplanectl export FILE --flavour slime|vime|miles [--out DIR]: a recipe as launch scripts.
// runplanectl import SCRIPT [--env K=V]... [--source-root DIR]... [-o recipe.yaml]: a bash launch
// script (read, never run) as a recipe, listing what it did not understand with line numbers.
// Exit status: 0 done (warnings and info notes allowed), 1 an error was printed (the recipe or
// script cannot be used as is: no launch command, a required field missing, a reader limit hit),
// 2 usage / I/O.

#include <CLI/CLI.hpp>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "backend/cli/command_registry.h"
#include "backend/cli/launcher_record.h"
#include "backend/launch/launch.h"
#include "backend/launch/shell_text.h"
#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"

namespace {

using namespace runplane::plan;
using namespace runplane::plan::launch;

struct ExportCliOptions {
    std::string file;
    std::string flavour;
    std::string out;
    std::string recipesDir;
    bool verbose = false;
};

struct ImportCliOptions {
    std::string script;
    std::vector<std::string> env;
    std::string output;
    std::string framework;
    std::string model;
    std::string recipesDir;
    std::vector<std::string> sourceRoots;
    bool force = false;
    bool verbose = false;
    // a miles Python launcher (issue 45): run with its command step replaced by a recorder
    bool runLauncher = false;
    std::vector<std::string> launcherArgs;
    std::string python = "python3";
    int launcherTimeoutS = 120;
    std::string recorded;  // write the recorded commands (bash) here
};

std::string executableDir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string findRecipesDir(const std::string& recipesDir) {
    if (!recipesDir.empty()) {
        return recipesDir;
    }
    auto located = locateRecipesDir(executableDir());
    return located.ok() ? *located : std::string();
}

// The catalog is optional here: without it model variants use the <model>_<variant> file name.
std::optional<ModelCatalog> loadCatalog(const std::string& recipesDir) {
    std::string dir = recipesDir;
    if (dir.empty()) {
        auto located = locateRecipesDir(executableDir());
        if (!located.ok()) {
            std::cerr << "runplanectl: note: no model catalog (" << located.error() << ")\n";
            return std::nullopt;
        }
        dir = *located;
    }
    auto catalog = ModelCatalog::loadDirectory(dir + "/models");
    if (!catalog.ok()) {
        std::cerr << "runplanectl: note: model catalog not loaded: " << catalog.error() << "\n";
        return std::nullopt;
    }
    return std::move(catalog).value();
}

void printNotes(const std::vector<LaunchNote>& notes, bool verbose) {
    int info = 0;
    for (const auto& n : notes) {
        if (n.level == NoteLevel::Info && !verbose) {
            ++info;
            continue;
        }
        std::cerr << n.format() << "\n";
    }
    if (info > 0) {
        std::cerr << "(" << info << " info note(s); --verbose shows them)\n";
    }
}

int runExport(const ExportCliOptions& o) {
    auto flavour = flavourFromName(o.flavour);
    if (!flavour) {
        std::cerr << "--flavour '" << o.flavour << "': expected slime, vime or miles\n";
        return 2;
    }
    std::ifstream probe(o.file);
    if (!probe) {
        std::cerr << o.file << ": cannot open the recipe file\n";
        return 2;
    }
    auto recipe = loadRecipe(o.file);
    if (!recipe.ok()) {
        std::cerr << recipe.error() << "\n";
        return 1;
    }
    std::optional<ModelCatalog> catalog = loadCatalog(o.recipesDir);
    ExportOptions options;
    options.catalog = catalog ? &*catalog : nullptr;
    auto bundle = exportLaunch(*recipe, *flavour, options);
    if (!bundle.ok()) {
        std::cerr << o.file << ": " << bundle.error() << "\n";
        return 1;
    }
    for (auto& n : bundle->notes) {
        n.file = n.file.empty() ? o.file : n.file;
    }
    printNotes(bundle->notes, o.verbose);
    if (o.out.empty()) {
        for (const auto& f : bundle->files) {
            std::cout << "# ---- " << f.name << " ----\n" << f.content;
        }
    } else {
        auto written = writeBundle(*bundle, o.out);
        if (!written.ok()) {
            std::cerr << written.error() << "\n";
            return 2;
        }
        for (const auto& f : bundle->files) {
            std::cout << "wrote " << (std::filesystem::path(o.out) / f.name).string() << "\n";
        }
        for (const auto& s : bundle->steps) {
            std::cout << s << "\n";
        }
    }
    return hasErrors(bundle->notes) ? 1 : 0;
}

int runImport(const ImportCliOptions& o) {
    ImportOptions options;
    for (const auto& pair : o.env) {
        const auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::cerr << "--env '" << pair << "': expected KEY=VALUE\n";
            return 2;
        }
        options.env.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    }
    if (!o.framework.empty()) {
        auto f = flavourFromName(o.framework);
        if (!f) {
            std::cerr << "--framework '" << o.framework << "': expected slime, vime or miles\n";
            return 2;
        }
        options.framework = *f == Flavour::Miles
                                ? Framework::Miles
                                : (*f == Flavour::Vime ? Framework::Vime : Framework::Slime);
    }
    options.modelName = o.model;
    for (const auto& root : o.sourceRoots) {
        if (!std::filesystem::is_directory(root)) {
            std::cerr << "--source-root '" << root << "': no such folder\n";
            return 2;
        }
        options.sourceRoots.push_back(root);
    }
    if (const std::string recipes = findRecipesDir(o.recipesDir); !recipes.empty()) {
        options.sourceRoots.push_back(recipes + "/models");  // the recipes' model files
    }
    if (!o.output.empty() && !o.force && std::filesystem::exists(o.output)) {
        std::cerr << o.output << ": already exists; pass --force to replace it\n";
        return 2;
    }
    std::optional<ModelCatalog> catalog = loadCatalog(o.recipesDir);
    options.catalog = catalog ? &*catalog : nullptr;
    if (!std::filesystem::is_regular_file(o.script)) {
        std::cerr << o.script << ": no such script\n";
        return 2;
    }
    const bool pythonLauncher = o.script.ends_with(".py");
    if (pythonLauncher && !o.runLauncher) {
        std::cerr << o.script
                  << ": a Python launcher: reading it means running it, with the commands it "
                     "builds recorded instead of run (no download, no Ray, no job); rerun with "
                     "--run-launcher (and its own options after --launcher-arg), see "
                     "docs/launch-scripts.md\n";
        return 2;
    }
    runplane::Result<ImportResult> result = runplane::Error{""};
    if (pythonLauncher) {
        const runplane::cli::LauncherRecord rec = runplane::cli::recordMilesLauncher(
            o.script, o.launcherArgs, options.env, o.python, o.launcherTimeoutS);
        if (!rec.ok) {
            std::cerr << o.script << ": error: " << detail::escapeControl(rec.error, true) << "\n";
            return 1;
        }
        if (!o.recorded.empty()) {
            std::ofstream(o.recorded, std::ios::binary | std::ios::trunc) << rec.script;
        }
        result = importScriptText(rec.script, o.script, options);
    } else {
        result = importScript(o.script, options);
    }
    if (!result.ok()) {
        std::cerr << detail::escapeControl(result.error(), true) << "\n";
        return 1;
    }
    printNotes(result->notes, o.verbose);
    if (!result->parameters.empty()) {
        std::cerr << "required variables (kept as ${NAME} in the recipe; give them with --env "
                     "K=V or set them when the export runs):\n";
        for (const auto& p : result->parameters) {
            std::string where;
            for (const auto& u : p.usedAt) {
                where += (where.empty() ? "" : ", ") + u;
            }
            std::cerr << "  " << detail::escapeControl(p.name) << "  used at "
                      << detail::escapeControl(where) << "\n";
        }
    }
    // an "error:" line means the recipe is not usable as is: the status says so too (issue #15)
    const int status = hasErrors(result->notes) ? 1 : 0;
    const std::string yaml = writeRecipe(result->recipe);
    if (o.output.empty()) {
        std::cout << yaml;
        return status;
    }
    const std::string tmp = o.output + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << "# Imported by `runplanectl import` from " << o.script << "\n" << yaml;
        if (!out) {
            std::cerr << tmp << ": cannot write\n";
            return 2;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, o.output, ec);
    if (ec) {
        std::cerr << o.output << ": cannot write (" << ec.message() << ")\n";
        std::filesystem::remove(tmp, ec);
        return 2;
    }
    std::cerr << "wrote " << o.output << "\n";
    return status;
}

const bool kLaunchGroup = runplane::cli::registerCommands([](CLI::App& app,
                                                             runplane::cli::CliContext& context) {
    auto ex = std::make_shared<ExportCliOptions>();
    CLI::App* exportCmd = app.add_subcommand(
        "export", "Write a recipe's launch scripts (job script, Ray head/worker/wait)");
    exportCmd->add_option("FILE", ex->file, "recipe YAML file")->required();
    exportCmd->add_option("--flavour", ex->flavour, "slime, vime or miles")->required();
    exportCmd->add_option("--out", ex->out,
                          "folder to write the scripts into (default: print them)");
    exportCmd->add_option("--recipes", ex->recipesDir, "recipes directory holding models/");
    exportCmd->add_flag("--verbose", ex->verbose, "also print info notes");
    exportCmd->callback([ex, &context] {
        try {
            context.exitCode = runExport(*ex);
        } catch (const std::exception& e) {
            std::cerr << "runplanectl export: error: " << e.what() << "\n";
            context.exitCode = 1;
        }
    });

    auto im = std::make_shared<ImportCliOptions>();
    CLI::App* importCmd = app.add_subcommand(
        "import",
        "Read a bash launch script (never run) into a recipe; prints what it did not "
        "understand with line numbers");
    importCmd->add_option("SCRIPT", im->script, "launch script")->required();
    importCmd->add_option("--env", im->env,
                          "KEY=VALUE the script is read under (decides if blocks; repeatable)");
    importCmd->add_option("-o,--output", im->output, "write the recipe here (default: print)");
    importCmd->add_flag("--force", im->force, "replace an existing --output file");
    importCmd->add_option("--framework", im->framework, "slime, vime or miles (default: detected)");
    importCmd->add_option("--model", im->model, "catalog model name (default: from the script)");
    importCmd->add_option("--recipes", im->recipesDir, "recipes directory holding models/");
    importCmd->add_option("--source-root", im->sourceRoots,
                          "folder `source` may also read from (besides the script's folder and "
                          "the recipes' models/; repeatable)");
    importCmd->add_flag("--verbose", im->verbose, "also print info notes");
    importCmd->add_flag("--run-launcher", im->runLauncher,
                        "SCRIPT is a miles Python launcher (scripts/run_*.py): run it with the "
                        "commands it builds recorded instead of run, and read those");
    importCmd
        ->add_option("--launcher-arg", im->launcherArgs,
                     "an option word for the Python launcher (repeatable, in order)")
        ->allow_extra_args(false);
    importCmd->add_option("--python", im->python, "the Python that runs the launcher (python3)");
    importCmd->add_option("--launcher-timeout", im->launcherTimeoutS,
                          "seconds the launcher may run (120)");
    importCmd->add_option("--recorded", im->recorded,
                          "write the recorded commands (a bash script) here");
    importCmd->callback([im, &context] {
        try {
            context.exitCode = runImport(*im);
        } catch (const std::exception& e) {  // e.g. out of memory: a message, not an abort
            std::cerr << "runplanectl import: error: " << e.what() << "\n";
            context.exitCode = 1;
        }
    });
});

}  // namespace
