// runplanectl cluster init: certificates, a token and a cluster profile for a secured cluster
// (docs/daemon.md, "Secured cluster in five minutes").
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <sstream>

#include "backend/cli/command_registry.h"
#include "backend/control/cluster_certs.h"
#include "backend/control/cluster_profile.h"

namespace {

struct InitOptions {
    std::string hosts;  // comma list
    runplane::control::ClusterInitOptions init;
};

void runInit(InitOptions o, runplane::cli::CliContext& context) {
    std::stringstream list(o.hosts);
    for (std::string host; std::getline(list, host, ',');) {
        if (!host.empty()) {
            o.init.hosts.push_back(host);
        }
    }
    auto result = runplane::control::initCluster(o.init);
    if (!result.ok()) {
        std::cerr << "runplanectl cluster init: " << result.error() << "\n";
        context.exitCode = 2;
        return;
    }
    // Loading it back proves the profile is well formed before anyone copies keys around.
    if (auto p = runplane::control::loadClusterProfile(result->profilePath); !p.ok()) {
        std::cerr << "runplanectl cluster init: " << p.error() << "\n";
        context.exitCode = 1;
        return;
    }
    std::cout << "wrote the cluster profile " << result->profilePath << "\n"
              << "copy to each host ca.pem, token and its server-HOST.pem/.key, then run:\n";
    for (const auto& line : result->daemonCommands) {
        std::cout << "  " << line << "\n";
    }
    std::cout << "then, here: runplanectl nodes --cluster " << result->profilePath << "\n"
              << "(keep ca.key offline; it signs new certificates)\n";
    context.exitCode = 0;
}

const bool kClusterGroup =
    runplane::cli::registerCommands([](CLI::App& app, runplane::cli::CliContext& context) {
        auto* group = app.add_subcommand("cluster", "Secured clusters: certificates and profiles");
        group->require_subcommand(1);
        auto init = std::make_shared<InitOptions>();
        auto* initCmd = group->add_subcommand(
            "init", "Write a CA, server and client certificates, a token and a cluster profile");
        initCmd->add_option("--hosts", init->hosts, "Comma list of hosts (name or IP[:PORT])")
            ->required();
        initCmd->add_option("--out", init->init.outDir, "Directory to write into")->required();
        initCmd->add_option("--name", init->init.name, "Cluster name (the profile is NAME.yaml)")
            ->capture_default_str();
        initCmd->add_option("--days", init->init.days, "Validity of the certificates in days")
            ->capture_default_str();
        initCmd->add_flag("--force", init->init.force,
                          "Replace the CA key, token and certificates of a cluster already in "
                          "--out (its daemons must then get the new ones)");
        initCmd->callback([init, &context] { runInit(*init, context); });
    });

}  // namespace
