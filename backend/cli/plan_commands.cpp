// runplanectl validate FILE / plan FILE [--json]: the run planner on the command line.
// Exit status: 0 clean (warnings allowed), 1 errors in the recipe, 2 usage or I/O problems.

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "backend/cli/command_registry.h"
#include "backend/cli/plan_from_run.h"
#include "backend/control/history_location.h"
#include "backend/plan/hf_config.h"
#include "backend/plan/planner.h"
#include "common/units/units.h"

namespace {

using namespace runplane::plan;

struct PlanOptions {
    std::string file;
    std::string recipesDir;
    bool json = false;
    std::string fromRun;  // plan only: a run whose measured peaks face the plan (issue 43)
    std::string history;
};

std::string executableDir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

/// A problem that stops the command before the recipe is checked (catalog not found): stderr, or
/// the JSON document with --json so that a caller parsing stdout always gets one.
void printSetupError(const PlanOptions& options, const std::string& message) {
    if (options.json) {
        std::cout << parseErrorsToJson({ParseDiagnostic{"", {}, message}}, options.file) << "\n";
    } else {
        std::cerr << message << "\n";
    }
}

/// Loads the catalog; prints the reason and returns nullptr when it cannot.
std::unique_ptr<ModelCatalog> loadCatalog(const PlanOptions& options) {
    std::string dir = options.recipesDir;
    if (dir.empty()) {
        auto located = locateRecipesDir(executableDir());
        if (!located.ok()) {
            printSetupError(options, "runplanectl: " + located.error());
            return nullptr;
        }
        dir = *located;
    }
    auto catalog = ModelCatalog::loadDirectory(dir + "/models");
    if (!catalog.ok()) {
        printSetupError(options, catalog.error());
        return nullptr;
    }
    return std::make_unique<ModelCatalog>(std::move(catalog).value());
}

/// Prints why the recipe could not be used: text lines, or one JSON document with --json.
void printParseErrors(const PlanOptions& options, const std::vector<ParseDiagnostic>& errors) {
    if (options.json) {
        std::cout << parseErrorsToJson(errors, options.file) << "\n";
        return;
    }
    for (const auto& d : errors) {
        std::cout << d.format(options.file) << "\n";
    }
}

/// Reads and parses the recipe; on failure prints every diagnostic and sets exitCode.
std::optional<Recipe> readRecipe(const PlanOptions& options, int& exitCode) {
    runplane::Result<std::string> text = readRecipeText(options.file);
    if (!text.ok()) {
        // The message already names the file (directory, unreadable, over the size limit).
        const std::string& message = text.error();
        const std::string prefix = options.file + ": ";
        printParseErrors(
            options,
            {ParseDiagnostic{
                "", {}, message.starts_with(prefix) ? message.substr(prefix.size()) : message}});
        exitCode = 2;
        return std::nullopt;
    }
    ParseOutcome outcome = parseRecipeDetailed(*text, options.file);
    if (!outcome.recipe.has_value()) {
        printParseErrors(options, outcome.diagnostics);
        exitCode = 1;
        return std::nullopt;
    }
    return std::move(outcome.recipe);
}

void printFindings(const std::vector<Finding>& findings, const std::string& file) {
    int counts[3] = {0, 0, 0};
    for (const auto& f : findings) {
        std::cout << formatFinding(f, file) << "\n";
        if (!f.fixHint.empty()) {
            std::cout << "    fix: " << f.fixHint << "\n";
        }
        ++counts[static_cast<int>(f.severity)];
    }
    std::cout << file << ": " << counts[0] << " error(s), " << counts[1] << " warning(s), "
              << counts[2] << " info\n";
}

int runValidate(const PlanOptions& options) {
    int exitCode = 0;
    auto catalog = loadCatalog(options);
    if (!catalog) {
        return 2;
    }
    auto recipe = readRecipe(options, exitCode);
    if (!recipe) {
        return exitCode;
    }
    std::vector<Finding> findings = validate(*recipe, *catalog);
    // The checkpoint's config.json, when readable from here (file I/O: not part of validate()).
    for (auto& f : checkHfConfig(*recipe, *catalog)) {
        findings.push_back(std::move(f));
    }
    if (options.json) {
        std::cout << findingsToJson(findings, options.file) << "\n";
    } else {
        printFindings(findings, options.file);
    }
    return hasErrors(findings) ? 1 : 0;
}

std::string phaseLine(const std::array<PhaseMemory, kPhaseCount>& phases) {
    std::string out;
    for (Phase p : kPhases) {
        out += out.empty() ? "" : "  ";
        out += std::string(toString(p)) + " " + formatGb(phases[std::size_t(p)].total());
    }
    return out;
}

// One line for the layout. A CPU-only recipe (the smoke workload: no GPUs per node) says so instead
// of "0 GPUs; trainer 0 ranks ... DP 0", which reads as a broken plan.
std::string layoutLine(const Layout& l) {
    std::ostringstream out;
    out << l.nodes << (l.nodes == 1 ? " node" : " nodes");
    if (l.gpusPerNode == 0) {
        out << ", CPU only: the smoke workload, no trainer or engine GPUs";
        return out.str();
    }
    out << " x " << l.gpusPerNode << " GPUs; trainer " << l.worldSize << " ranks TP" << l.tp
        << " PP" << l.pp << " CP" << l.cp << " EP" << l.ep << " ETP" << l.etp << " -> DP " << l.dp
        << ", expert-DP " << l.expertDp << "; rollout " << l.rolloutGpus << " GPUs = " << l.engines
        << " x " << toString(l.engine) << " engine(s) of " << l.gpusPerEngine << " (TP"
        << l.engineTp << " DP" << l.engineDp << " EP" << l.engineEp << " PP" << l.enginePp << ")"
        << (l.engineCrossNode ? ", cross-node" : "");
    return out.str();
}

void printPlanText(const Plan& plan, const Recipe& recipe, const std::string& file) {
    printFindings(plan.findings, file);
    const Layout& l = plan.layout;
    std::cout << "\nrecipe: " << (recipe.name.empty() ? file : recipe.name) << " ("
              << toString(recipe.framework) << ", " << toString(recipe.placement) << ")\n";
    if (plan.model.has_value()) {
        const auto& m = *plan.model;
        std::cout << "model: " << m.name << " — " << m.numLayers << " layers";
        if (m.linear.kind != LinearAttentionKind::None) {
            std::cout << " (" << m.numLinearAttentionLayers() << " " << toString(m.linear.kind)
                      << " + " << m.numFullAttentionLayers() << " full attention)";
        }
        std::cout << ", " << runplane::units::formatCount(plan.params.total) << " params ("
                  << runplane::units::formatCount(plan.params.active) << " active)\n";
    }
    std::cout << "layout: " << layoutLine(l) << "\n";
    std::cout << "\ntopology:\n";
    for (const auto& line : plan.topology.summaryLines()) {
        std::cout << "  " << line << "\n";
    }
    if (!plan.model.has_value()) {
        return;
    }
    const MemoryPlan& m = plan.memory;
    std::cout << "\nhost memory per node (RAM " << formatGb(m.hostRamBytes) << ", alarm "
              << formatGb(m.hostAlarmBytes) << "):\n";
    std::cout << "  fixed budgets (process runtime, Ray object store) on the peak node: "
              << formatGb(m.fixedHostPerNodeMax) << " of " << formatGb(m.peakBytes) << "\n";
    // Consecutive nodes with the same totals are printed once.
    std::size_t i = 0;
    while (i < m.nodes.size()) {
        std::size_t j = i + 1;
        const std::string line = phaseLine(m.nodes[i].phases);
        while (j < m.nodes.size() && phaseLine(m.nodes[j].phases) == line) {
            ++j;
        }
        const NodeMemory& n = m.nodes[i];
        std::cout << "  node"
                  << (j - i > 1 ? "s " + std::to_string(i) + "-" + std::to_string(j - 1)
                                : " " + std::to_string(i))
                  << ": " << line << "  (peak " << formatGb(n.peakBytes) << " in "
                  << toString(n.peakPhase) << ")\n";
        const PhaseMemory& peak = n.phases[std::size_t(n.peakPhase)];
        for (const auto& item : peak.items()) {
            std::cout << "      " << toString(item.component) << ": " << describe(item) << "   ["
                      << formulaOf(item.component) << "]"
                      << (isFixedBudget(item.component) ? " (fixed budget)" : "") << "\n";
        }
        i = j;
    }
    if (!m.gpus.empty()) {
        std::cout << "\nGPU memory per GPU (HBM " << formatGb(m.gpuBytes) << "):\n";
        for (const auto& g : m.gpus) {
            std::cout << "  " << g.label() << ": " << phaseLine(g.phases) << "  (peak "
                      << formatGb(g.peakBytes) << " in " << toString(g.peakPhase) << ")\n";
            for (const auto& item : g.phases[std::size_t(g.peakPhase)].items()) {
                std::cout << "      " << toString(item.component) << ": " << describe(item) << "\n";
            }
        }
    }
}

int runPlan(const PlanOptions& options) {
    int exitCode = 0;
    auto catalog = loadCatalog(options);
    if (!catalog) {
        return 2;
    }
    auto recipe = readRecipe(options, exitCode);
    if (!recipe) {
        return exitCode;
    }
    const Plan plan = planRecipe(*recipe, *catalog);
    if (!options.fromRun.empty()) {
        return runplane::cli::printPlanFromRun(plan, *recipe, options.fromRun, options.history,
                                               options.json);
    }
    if (options.json) {
        std::cout << planToJson(plan, options.file) << "\n";
    } else {
        printPlanText(plan, *recipe, options.file);
    }
    return hasErrors(plan.findings) ? 1 : 0;
}

/// Runs a command so that no exception leaves it: an unexpected one is reported and exits 2.
int guarded(int (*command)(const PlanOptions&), const PlanOptions& options) {
    try {
        return command(options);
    } catch (const std::exception& e) {
        std::cerr << "runplanectl: " << options.file << ": internal error: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "runplanectl: " << options.file << ": internal error\n";
    }
    return 2;
}

void addCommon(CLI::App* sub, PlanOptions& options) {
    sub->add_option("FILE", options.file, "recipe YAML file")->required();
    sub->add_flag("--json", options.json, "print JSON instead of text");
    sub->add_option("--recipes", options.recipesDir,
                    "recipes directory holding models/ (default: $RUNPLANE_RECIPES, next to the "
                    "executable, or the source tree)");
}

const bool kPlanGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto validateOptions = std::make_shared<PlanOptions>();
        CLI::App* validateCmd = app.add_subcommand(
            "validate",
            "Check a recipe; prints file:line:col: severity: message lines (exit 1 on "
            "errors)");
        addCommon(validateCmd, *validateOptions);
        validateCmd->callback([validateOptions, &context] {
            context.exitCode = guarded(runValidate, *validateOptions);
        });

        auto planOptions = std::make_shared<PlanOptions>();
        CLI::App* planCmd = app.add_subcommand(
            "plan", "Findings, topology and memory per node and GPU per phase of a recipe");
        addCommon(planCmd, *planOptions);
        planOptions->history = runplane::control::defaultHistoryPath();
        planCmd->add_option("--from-run", planOptions->fromRun,
                            "a finished run: its measured peak per role beside this plan, and the "
                            "fixed budgets taken from it");
        planCmd->add_option("--history", planOptions->history, "History file ($RUNPLANE_HISTORY)")
            ->capture_default_str();
        planCmd->callback(
            [planOptions, &context] { context.exitCode = guarded(runPlan, *planOptions); });
    });

}  // namespace
