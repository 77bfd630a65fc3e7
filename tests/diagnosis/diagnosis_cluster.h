#pragma once
// N real runplaned on loopback, each running the same run: one "rank" per node, a real Python
// process blocked in a known function (tests/diagnosis/blocked_rank.py), with py-spy on the
// daemons' PATH from the pinned venv (scripts/setup-pyspy-venv.sh, $RUNPLANE_BINARY_DIR/
// pyspy-venv). Shared by the diagnosis daemon tests and bench/diagnosis.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runplane/v1/agent.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace runplane::diagnosis::testing {

using runplane::testing::DaemonProcess;
using runplane::testing::DaemonSpec;
using runplane::testing::TempDir;

inline std::string pySpyVenv() {
    return runplane::testing::builtBinary("pyspy-venv");
}

inline bool haveVenv() {
    return ::access((pySpyVenv() + "/bin/py-spy").c_str(), X_OK) == 0 &&
           ::access((pySpyVenv() + "/bin/python3").c_str(), X_OK) == 0;
}

struct ClusterOptions {
    int nodes = 1;
    std::string runId = "hung-run";
    bool pySpyOnPath = true;
    /// The function node i's rank blocks in ("barrier" unless given).
    std::function<std::string(int)> functionOf;
    /// Extra run environment of node i (RANK=i is always set).
    std::function<std::map<std::string, std::string>(int)> envOf;
    /// Extra runplaned arguments of node i (e.g. --node-id, --stall-seconds).
    std::function<std::vector<std::string>(int)> daemonArgsOf;
};

class DiagnosisCluster {
  public:
    explicit DiagnosisCluster(ClusterOptions options) : m_options(std::move(options)) {
        const char* path = std::getenv("PATH");
        const std::string daemonPath =
            (m_options.pySpyOnPath ? pySpyVenv() + "/bin:" : std::string()) +
            (path ? path : "/usr/bin:/bin");
        for (int i = 0; i < m_options.nodes; ++i) {
            DaemonSpec spec;
            spec.stateDir = m_dir.path() + "/node" + std::to_string(i);
            spec.env = {"PATH=" + daemonPath};
            if (m_options.daemonArgsOf) {
                spec.args = m_options.daemonArgsOf(i);
            }
            m_daemons.push_back(std::make_unique<DaemonProcess>(spec));
        }
        std::ofstream(sentinel()) << "the ranks run while this file exists\n";
    }
    /// Removing the sentinel ends every rank (also those whose daemon was killed).
    ~DiagnosisCluster() { std::remove(sentinel().c_str()); }
    DiagnosisCluster(const DiagnosisCluster&) = delete;
    DiagnosisCluster& operator=(const DiagnosisCluster&) = delete;

    /// Empty when every daemon listens and every run started; else why not.
    std::string start() {
        for (int i = 0; i < m_options.nodes; ++i) {
            if (!m_daemons[i]->ok()) {
                return "daemon " + std::to_string(i) + ": " + m_daemons[i]->error();
            }
        }
        std::vector<std::string> errors(m_options.nodes);
        std::vector<std::thread> threads;
        for (int i = 0; i < m_options.nodes; ++i) {
            threads.emplace_back([this, i, &errors] { errors[i] = startRank(i); });
        }
        for (auto& t : threads) {
            t.join();
        }
        for (const auto& e : errors) {
            if (!e.empty()) {
                return e;
            }
        }
        return {};
    }

    std::vector<std::string> addresses() const {
        std::vector<std::string> out;
        for (const auto& d : m_daemons) {
            out.push_back(d->address());
        }
        return out;
    }
    DaemonProcess& daemon(int i) { return *m_daemons[i]; }
    std::string stateDir(int i) const { return m_dir.path() + "/node" + std::to_string(i); }
    const std::string& scratch() const { return m_dir.path(); }
    std::string function(int i) const {
        return m_options.functionOf ? m_options.functionOf(i) : "barrier";
    }

  private:
    std::string sentinel() const { return m_dir.path() + "/ranks-alive"; }
    std::string startRank(int i) {
        auto stub = v1::Agent::NewStub(
            grpc::CreateChannel(m_daemons[i]->address(), grpc::InsecureChannelCredentials()));
        v1::StartRunRequest req;
        req.set_run_id(m_options.runId);
        req.add_argv(pySpyVenv() + "/bin/python3");
        req.add_argv(runplane::testing::sourceDir() + "/tests/diagnosis/blocked_rank.py");
        req.add_argv(function(i));
        req.set_role(v1::RUN_ROLE_STANDALONE);
        (*req.mutable_env())["RANK"] = std::to_string(i);
        (*req.mutable_env())["LOCAL_RANK"] = "0";
        (*req.mutable_env())["DIAGNOSIS_TEST_SENTINEL"] = sentinel();
        if (m_options.envOf) {
            for (const auto& [k, v] : m_options.envOf(i)) {
                (*req.mutable_env())[k] = v;
            }
        }
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        v1::RunStatus st;
        const grpc::Status s = stub->StartRun(&ctx, req, &st);
        if (!s.ok()) {
            return "StartRun on node " + std::to_string(i) + ": " + s.error_message();
        }
        // The rank prints its line just before it blocks in its function.
        const std::string log = stateDir(i) + "/runs.d/" + m_options.runId + "/stdout.log";
        if (!runplane::testing::waitUntil(
                [&] {
                    return runplane::testing::readFile(log).find("entering") != std::string::npos;
                },
                std::chrono::seconds(30), std::chrono::milliseconds(50))) {
            return "node " + std::to_string(i) + ": the rank did not start (" + log + ")";
        }
        return {};
    }

    ClusterOptions m_options;
    TempDir m_dir{"runplane-diagnosis"};
    std::vector<std::unique_ptr<DaemonProcess>> m_daemons;
};

}  // namespace runplane::diagnosis::testing
