// runplane-ras-report: one node's diagnosis without the daemon (issue #44), for a GPU host with
// no gRPC (scripts/gpu/ras-diagnose.sh builds it with bare g++) and for operators: reads the
// NCCL RAS report over loopback (NCCL_RAS_ADDR or --addr), adds py-spy JSON dumps given as
// PID=FILE and the kernel log lines since --since-boot seconds, judges them and prints the
// diagnosis as JSON (docs/diagnosis.md, "Format and storage"), the RAS text as RAS sent it under
// "ras_raw". Exit 0 when the RAS report was read, 1 when not, 2 on usage errors.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"

namespace dx = runplane::diagnosis;

int main(int argc, char** argv) {
    try {
        std::string addr = std::getenv("NCCL_RAS_ADDR") ? std::getenv("NCCL_RAS_ADDR") : "";
        long timeoutMs = 8000;
        double sinceBoot = 0;
        std::string kmsg = "/dev/kmsg";
        std::vector<std::pair<long, std::string>> stacks;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) {
                    throw std::invalid_argument(a + " needs a value");
                }
                return argv[++i];
            };
            if (a == "--addr") {
                addr = next();
            } else if (a == "--timeout-ms") {
                timeoutMs = std::stol(next());
            } else if (a == "--since-boot") {
                sinceBoot = std::stod(next());
            } else if (a == "--kmsg") {
                kmsg = next();
            } else if (a == "--stack") {
                const std::string v = next();
                const auto eq = v.find('=');
                if (eq == std::string::npos) {
                    throw std::invalid_argument("--stack " + v + ": expected PID=FILE");
                }
                stacks.emplace_back(std::stol(v.substr(0, eq)), v.substr(eq + 1));
            } else {
                throw std::invalid_argument("unknown argument '" + a + "'");
            }
        }
        dx::RunDiagnosis d;
        d.trigger = "on_demand";
        dx::NodeDiagnosis node;
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        node.hostname = host;
        std::string raw;
        auto endpoint = dx::rasEndpoint(addr);
        if (!endpoint) {
            node.rasMissing = endpoint.error();
        } else {
            node.rasEndpoint = endpoint->text();
            dx::RasClientOptions o;
            o.endpoint = *endpoint;
            o.timeout = std::chrono::milliseconds(timeoutMs);
            auto fetched = dx::fetchRasReport(o);
            if (fetched) {
                node.rasAvailable = true;
                node.ras = fetched->report;
                node.rasMs = fetched->took.count();
                raw = fetched->raw;
            } else {
                node.rasMissing = fetched.error();
            }
        }
        for (const auto& [pid, file] : stacks) {
            dx::ProcessStacks s;
            s.pid = pid;
            std::ifstream in(file);
            std::ostringstream text;
            text << in.rdbuf();
            auto threads = dx::parsePySpyJson(text.str());
            if (threads) {
                s.threads = std::move(*threads);
            } else {
                s.error = file + ": " + threads.error();
            }
            node.stacks.push_back(std::move(s));
            node.stackTool = "py-spy";
            node.stackToolSource = "given";
        }
        if (stacks.empty()) {
            node.stacksMissing = "no --stack PID=FILE given";
        }
        auto k = dx::readKmsg(kmsg, sinceBoot);
        if (k) {
            node.kernelLogSource = k->source;
            node.kernelLines = k->lines;
        } else {
            node.kernelLogMissing = k.error();
        }
        node.gpusMissing = "not read by runplane-ras-report";
        node.outputMissing = "not read by runplane-ras-report";
        d.nodes.push_back(node);
        d.verdict = dx::judge(d.nodes);
        auto j = dx::toJson(d);
        j["ras_raw"] = raw;
        std::cout << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return node.rasAvailable ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "runplane-ras-report: " << e.what() << "\n";
        return 2;
    }
}
