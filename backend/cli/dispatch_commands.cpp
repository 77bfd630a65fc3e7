// runplanectl dispatch preflight / launch / stop: multi-node runs on Ray (docs/dispatch.md).
// The recipe becomes the per-node preflight specs in backend/control/recipe_preflight.h, which
// the Cluster page's Preflight box uses too.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backend/cli/command_registry.h"
#include "backend/cli/connection_flags.h"
#include "backend/cli/planned_roles.h"
#include "backend/cli/run_lineage_cli.h"
#include "backend/control/dispatch.h"
#include "backend/control/dispatch_history.h"
#include "backend/control/dispatch_membership.h"
#include "backend/control/history_location.h"
#include "backend/control/recipe_preflight.h"
#include "backend/control/text_format.h"
#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"

namespace {

using namespace runplane::control;
using nlohmann::json;

struct CommonOptions {
    std::string recipe;
    std::vector<std::string> env;  // KEY=VALUE
    std::string recipesDir;
    double minFreeDiskGb = 0;
    runplane::cli::ConnectionFlags connection;
    double callTimeout = 10;
    bool json = false;
};

struct PreflightOptions : CommonOptions {
    std::vector<std::string> nodes;
};

struct LaunchOptions : CommonOptions {
    std::string head;
    std::vector<std::string> workers;
    bool overridePreflight = false;
    double timeout = 120;
    unsigned gpusPerNode = 0;  // 0 = recipe's hardware.gpus_per_node
    unsigned rayPort = 6379;
    std::string rayAuth = "disabled";
    std::string rayAuthTokenPath;
    std::string runId;
    std::string workdir;
    std::string history = runplane::control::defaultHistoryPath();
    std::string name;
    std::string resumes;  // RUN[@STEP]: lineage (docs/history.md "Run lineage")
    std::string forks;
    std::vector<std::string> argv;
};

struct StopOptions {
    std::string head;
    std::vector<std::string> workers;
    std::string runId;
    double grace = 10;
    bool force = false;
    runplane::cli::ConnectionFlags connection;
    std::string history = runplane::control::defaultHistoryPath();
    bool json = false;
};

// The shared connection flags, resolved; prints the error and sets exitCode 2 on failure.
bool connect(const runplane::cli::ConnectionFlags& flags, double timeout, const char* command,
             runplane::cli::Connection* out, int& exitCode) {
    auto c = runplane::cli::resolveConnection(flags);
    if (!c.ok()) {
        std::cerr << command << ": " << c.error() << "\n";
        exitCode = 2;
        return false;
    }
    *out = *c;
    out->client.callTimeout = std::chrono::milliseconds(static_cast<long>(timeout * 1000));
    return true;
}

// --head/--workers, or from the profile: the node with role "head" (else the first) and the rest.
bool headAndWorkers(std::string& head, std::vector<std::string>& workers,
                    const runplane::cli::Connection& c, const char* command, int& exitCode) {
    if (!head.empty()) {
        head = runplane::cli::resolveAddress(head, c);
        for (auto& w : workers) {
            w = runplane::cli::resolveAddress(w, c);
        }
        return true;
    }
    if (c.profileNodes.empty()) {
        std::cerr << command
                  << ": give --head HOST:PORT, or --cluster with a profile listing nodes\n";
        exitCode = 2;
        return false;
    }
    std::size_t h = 0;
    for (std::size_t i = 0; i < c.profileNodes.size(); ++i) {
        if (c.profileNodes[i].role == "head") {
            h = i;
            break;
        }
    }
    head = c.profileNodes[h].address;
    if (workers.empty()) {
        for (std::size_t i = 0; i < c.profileNodes.size(); ++i) {
            if (i != h) {
                workers.push_back(c.profileNodes[i].address);
            }
        }
    }
    return true;
}

std::string executableDir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

/// The recipe as preflight specs, one per node (head first; recipe_preflight.h). Prints and
/// returns false on error. hfFindings gets the checkpoint config.json cross-check (rule
/// model.hf-config) when the checkpoint directory is readable from here.
bool buildSpecs(const CommonOptions& o, std::size_t nodeCount, std::vector<PreflightSpec>* specs,
                runplane::plan::Recipe* recipeOut, std::vector<runplane::plan::Finding>* hfFindings,
                int& exitCode) {
    std::ifstream in(o.recipe, std::ios::binary);
    if (!in) {
        std::cerr << o.recipe << ": cannot open the recipe file\n";
        exitCode = 2;
        return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    auto recipe = runplane::plan::parseRecipe(text.str(), o.recipe);
    if (!recipe) {
        std::cerr << recipe.error() << "\n";
        exitCode = 2;
        return false;
    }
    // The model catalog for the host-memory peak per node (skipped, with a note, without one).
    std::string dir = o.recipesDir;
    if (dir.empty()) {
        auto located = runplane::plan::locateRecipesDir(executableDir());
        dir = located ? *located : "";
    }
    auto catalog = dir.empty() ? runplane::Result<runplane::plan::ModelCatalog>(
                                     runplane::Error{"no recipes directory"})
                               : runplane::plan::ModelCatalog::loadDirectory(dir + "/models");
    RecipePreflightOptions options;
    options.envOverrides = o.env;
    options.minFreeDiskGb = o.minFreeDiskGb;
    options.catalog = catalog ? &*catalog : nullptr;
    options.catalogError = catalog ? "" : catalog.error();
    auto built = recipePreflight(*recipe, text.str(), nodeCount, options);
    if (!built) {
        std::cerr << built.error() << "\n";
        exitCode = 2;
        return false;
    }
    for (const auto& note : built->notes) {
        std::cerr << "note: " << note << "\n";
    }
    *specs = std::move(built->specs);
    *hfFindings = std::move(built->hfFindings);
    *recipeOut = std::move(recipe).value();
    return true;
}

/// The config.json cross-check's findings, on stderr (they are part of preflight).
void printConfigFindings(const std::vector<runplane::plan::Finding>& findings,
                         const std::string& file) {
    for (const auto& f : findings) {
        std::cerr << runplane::plan::formatFinding(f, file) << "\n";
    }
}

// The bar is redrawn in place on a terminal only; into a pipe or a file just the finished steps.
void printEvent(const DispatchEvent& e) {
    static const bool terminal = runplane::control::canRedraw(STDERR_FILENO);
    if (!e.done) {
        if (terminal) {
            std::cerr << "\r" << runplane::control::progressBar(e.progress) << " "
                      << toString(e.step) << " " << e.message << "   " << std::flush;
        }
        return;
    }
    std::cerr << (terminal ? "\r" : "") << (e.ok ? "ok   " : "FAIL ") << toString(e.step)
              << (e.node.empty() ? "" : " " + e.node) << ": " << e.message << "\n";
}

json eventsJson(const std::vector<DispatchEvent>& events) {
    json out = json::array();
    for (const auto& e : events) {
        out.push_back(
            {{"step", toString(e.step)}, {"node", e.node}, {"ok", e.ok}, {"message", e.message}});
    }
    return out;
}

void runPreflight(PreflightOptions o, int& exitCode) {
    runplane::cli::Connection connection;
    if (!connect(o.connection, o.callTimeout, "dispatch preflight", &connection, exitCode)) {
        return;
    }
    auto nodes = runplane::cli::addressesOrProfile(o.nodes, connection, "dispatch preflight");
    if (!nodes.ok()) {
        std::cerr << nodes.error() << "\n";
        exitCode = 2;
        return;
    }
    o.nodes = *nodes;
    std::vector<PreflightSpec> specs;
    runplane::plan::Recipe recipe;
    std::vector<runplane::plan::Finding> hf;
    if (!buildSpecs(o, o.nodes.size(), &specs, &recipe, &hf, exitCode)) {
        return;
    }
    printConfigFindings(hf, o.recipe);
    defaultRank0(specs, o.nodes);  // the first node acts as head
    const auto table = preflightNodes(o.nodes, specs, connection.client);
    // Which Ray cluster each node's raylets belong to (issue 47), asked of the nodes that answered.
    std::vector<std::string> answered;
    for (const auto& row : table.rows) {
        if (row.reachable) {
            answered.push_back(row.address);
        }
    }
    const auto membership = rayMembership(answered, connection.client);
    if (o.json) {
        json out = json::parse(preflightTableToJson(table));
        out["ray_membership"] = json::parse(membershipToJson(membership));
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << formatPreflightTable(table) << "\n" << formatMembership(membership);
    }
    exitCode = table.anyFail() || runplane::plan::hasErrors(hf) ? 1 : 0;
}

void runLaunch(LaunchOptions o, int& exitCode) {
    runplane::cli::Connection connection;
    if (const std::string bad = runplane::cli::checkNamedParent(o.history, o.resumes, o.forks);
        !bad.empty()) {  // the parent must be known before any node is touched
        std::cerr << "dispatch launch: " << bad << "\n";
        exitCode = 2;
        return;
    }
    if (!connect(o.connection, o.callTimeout, "dispatch launch", &connection, exitCode) ||
        !headAndWorkers(o.head, o.workers, connection, "dispatch launch", exitCode)) {
        return;
    }
    std::vector<PreflightSpec> specs;
    runplane::plan::Recipe recipe;
    std::vector<runplane::plan::Finding> hf;
    if (!buildSpecs(o, 1 + o.workers.size(), &specs, &recipe, &hf, exitCode)) {
        return;
    }
    printConfigFindings(hf, o.recipe);
    if (runplane::plan::hasErrors(hf) && !o.overridePreflight) {
        std::cerr << "dispatch launch: the model shape does not match the checkpoint's "
                     "config.json; launch blocked (override with --override-preflight)\n";
        exitCode = 1;
        return;
    }
    LaunchRequest r;
    r.head = o.head;
    r.workers = o.workers;
    r.gpusPerNode = o.gpusPerNode != 0 ? o.gpusPerNode
                                       : static_cast<std::uint32_t>(recipe.hardware.gpusPerNode);
    r.rayPort = o.rayPort;
    r.rayAuthMode = o.rayAuth;
    r.rayAuthTokenPath = o.rayAuthTokenPath;
    r.clusterTimeout = std::chrono::milliseconds(static_cast<long>(o.timeout * 1000));
    r.preflight = specs[0];
    for (const auto& s : specs) {
        r.plannedPeakHostBytesPerNode.push_back(s.plannedPeakHostBytes);
    }
    r.overridePreflight = o.overridePreflight;
    r.client = connection.client;
    r.run.runId = runplane::RunId{o.runId};
    r.run.workdir = o.workdir.empty() ? recipe.launcher.workdir : o.workdir;
    r.run.argv = o.argv.empty() ? recipe.launcher.argv : o.argv;
    r.run.env = specs[0].env;
    r.run.recipeYaml = specs[0].recipeYaml;
    // Each node's share of the plan by role, for its daemon (docs/daemon.md, "Planned roles"):
    // the head's with its run, a worker's with its plan holder (docs/dispatch.md).
    for (std::size_t i = 0; i < 1 + o.workers.size(); ++i) {
        std::string why;
        r.plannedRolesPerNode.push_back(runplane::cli::plannedRolesOfSnapshot(
            r.run.recipeYaml, o.recipesDir, static_cast<int>(i), why));
    }
    r.run.plannedRoles = r.plannedRolesPerNode.front();
    // The recipe's own process roles go with the head's run and every worker's plan holder.
    r.run.roleRows = runplane::cli::roleRowsOf("", &recipe);
    if (r.run.argv.empty()) {
        std::cerr << "dispatch launch: no command: give it after -- or set launcher.argv in "
                  << o.recipe << "\n";
        exitCode = 2;
        return;
    }
    const auto result =
        launchMultiNode(r, o.json ? DispatchCallback{} : DispatchCallback{printEvent});
    DispatchRecordSpec record;
    record.historyPath = o.history;
    record.runName = o.name;
    record.recipeYaml = r.run.recipeYaml;
    record.provenanceJson = json{{"argv", r.run.argv},
                                 {"workdir", r.run.workdir},
                                 {"recipe_path", std::filesystem::absolute(o.recipe).string()}}
                                .dump();
    if (runplane::Status s = recordLaunch(record, r, result); !s.ok()) {
        // The cluster state is what it is; only the record is missing, and the user is told.
        std::cerr << "dispatch launch: not recorded in the history: " << s.error() << "\n";
    } else if (result.launched) {
        // The same lineage as `submit`: the named parent, else the checkpoint the argv loads.
        const std::string lineage = runplane::cli::recordLaunchLineage(
            o.history, result.headRun.runId.value(), o.resumes, o.forks, r.run.argv, r.run.workdir);
        if (!lineage.empty()) {
            std::cerr << "dispatch launch: " << lineage << "\n";
        }
    }
    if (o.json) {
        json doc{{"launched", result.launched},
                 {"error", result.error},
                 {"run_id", result.headRun.runId.value()},
                 {"preflight_overridden", result.preflightOverridden},
                 {"overridden_failures", result.overriddenFailures},
                 {"env", result.runEnv},
                 {"preflight", json::parse(preflightTableToJson(result.preflight))},
                 {"events", eventsJson(result.events)}};
        std::cout << doc.dump(2) << "\n";
    } else if (!result.launched) {
        if (!result.preflight.rows.empty() && result.preflight.anyFail()) {
            std::cout << formatPreflightTable(result.preflight);
        }
        std::cerr << "dispatch launch: " << result.error << "\n";
    } else {
        std::cout << "run " << result.headRun.runId.value() << " started on " << o.head
                  << (result.preflightOverridden ? " (preflight failures overridden)" : "") << "\n";
    }
    exitCode = result.launched ? 0 : 1;
}

void runStop(StopOptions o, int& exitCode) {
    runplane::cli::Connection connection;
    if (!connect(o.connection, 10, "dispatch stop", &connection, exitCode) ||
        !headAndWorkers(o.head, o.workers, connection, "dispatch stop", exitCode)) {
        return;
    }
    StopRequest r;
    r.head = o.head;
    r.workers = o.workers;
    r.runId = o.runId;
    r.graceSeconds = o.grace;
    r.force = o.force;
    r.client = connection.client;
    const auto result =
        stopMultiNode(r, o.json ? DispatchCallback{} : DispatchCallback{printEvent});
    if (runplane::Status s = recordStop(o.history, o.runId, result); !s.ok()) {
        std::cerr << "dispatch stop: not recorded in the history: " << s.error() << "\n";
    }
    if (o.json) {
        std::cout << json{{"ok", result.ok},
                          {"errors", result.errors},
                          {"events", eventsJson(result.events)}}
                         .dump(2)
                  << "\n";
    }
    exitCode = result.ok ? 0 : 1;
}

void addCommon(CLI::App* cmd, CommonOptions& o) {
    cmd->add_option("--recipe", o.recipe, "Recipe YAML")->required()->check(CLI::ExistingFile);
    cmd->add_option("--env", o.env, "KEY=VALUE added to the run's environment (e.g. PATH for ray)");
    cmd->add_option("--recipes-dir", o.recipesDir,
                    "Recipes directory (model catalog) for the memory plan");
    cmd->add_option("--min-free-disk-gb", o.minFreeDiskGb,
                    "Free disk required at checkpoints.save");
    runplane::cli::addConnectionFlags(cmd, o.connection);
    cmd->add_option("--call-timeout", o.callTimeout, "Seconds per RPC")->capture_default_str();
    cmd->add_flag("--json", o.json, "Print JSON");
}

const bool kDispatchGroup = runplane::cli::registerCommands([](CLI::App& app,
                                                               runplane::cli::CliContext& context) {
    auto* group = app.add_subcommand("dispatch", "Multi-node runs on Ray: preflight, launch, stop");
    group->require_subcommand(1);

    auto pre = std::make_shared<PreflightOptions>();
    auto* preCmd =
        group->add_subcommand("preflight", "Check every node at once (exit 1 on any FAIL)");
    addCommon(preCmd, *pre);
    preCmd->add_option("nodes", pre->nodes,
                       "Daemon addresses HOST:PORT, the first acts as head (default: --cluster)");
    preCmd->callback([pre, &context] { runPreflight(*pre, context.exitCode); });

    auto launch = std::make_shared<LaunchOptions>();
    auto* launchCmd =
        group->add_subcommand("launch", "Preflight, start Ray on every node, run on the head");
    addCommon(launchCmd, *launch);
    launchCmd->add_option("--head", launch->head,
                          "Head daemon HOST:PORT (default: the --cluster node with role head)");
    launchCmd->add_option("--workers", launch->workers, "Worker daemons HOST:PORT");
    launchCmd->add_flag("--override-preflight", launch->overridePreflight,
                        "Launch despite FAIL checks (recorded)");
    launchCmd
        ->add_option("--timeout", launch->timeout, "Seconds to wait for the cluster's GPU total")
        ->capture_default_str();
    launchCmd->add_option("--gpus-per-node", launch->gpusPerNode,
                          "GPUs declared to Ray per node (default: recipe)");
    launchCmd->add_option("--ray-port", launch->rayPort, "Head's Ray port")->capture_default_str();
    launchCmd
        ->add_option("--ray-auth", launch->rayAuth,
                     "Ray token authentication on every node: disabled or token (RAY_AUTH_MODE)")
        ->check(CLI::IsMember({"disabled", "token"}))
        ->capture_default_str();
    launchCmd->add_option("--ray-auth-token-path", launch->rayAuthTokenPath,
                          "With --ray-auth token: the token file's path on every node");
    launchCmd->add_option("--run-id", launch->runId, "Run id (default: generated)");
    launchCmd->add_option("--history", launch->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    launchCmd->add_option("--name", launch->name, "Run name in the history (default: the run id)");
    launchCmd->add_option("--resumes", launch->resumes,
                          "RUN[@STEP]: this run resumes RUN's checkpoint (lineage)");
    launchCmd->add_option("--forks", launch->forks,
                          "RUN[@STEP]: this run forks from RUN at STEP (lineage)");
    launchCmd->add_option("--workdir", launch->workdir,
                          "Working directory under the head's run root");
    launchCmd->add_option("command", launch->argv,
                          "The launcher command, after -- (default: launcher.argv)");
    launchCmd->callback([launch, &context] { runLaunch(*launch, context.exitCode); });

    auto stop = std::make_shared<StopOptions>();
    auto* stopCmd =
        group->add_subcommand("stop", "Stop the run on the head, then `ray stop` on every node");
    stopCmd->add_option("--head", stop->head,
                        "Head daemon HOST:PORT (default: the --cluster node with role head)");
    stopCmd->add_option("--workers", stop->workers, "Worker daemons HOST:PORT");
    stopCmd->add_option("--run-id", stop->runId, "Run to stop first (default: only tear Ray down)");
    stopCmd->add_option("--grace", stop->grace, "Seconds between SIGTERM and SIGKILL")
        ->capture_default_str();
    stopCmd->add_flag("--force", stop->force, "ray stop --force");
    stopCmd->add_option("--history", stop->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    runplane::cli::addConnectionFlags(stopCmd, stop->connection);
    stopCmd->add_flag("--json", stop->json, "Print JSON");
    stopCmd->callback([stop, &context] { runStop(*stop, context.exitCode); });
});

}  // namespace
