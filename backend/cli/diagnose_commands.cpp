// runplanectl diagnose RUN: a hang/failure diagnosis of a run from every one of its nodes at once
// (NCCL RAS, py-spy stacks, GPU state, kernel log, last output), judged into one verdict and
// stored with the run in the history; --stored reads it back after the nodes are gone
// (runplane_control, docs/diagnosis.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "backend/cli/command_registry.h"
#include "backend/cli/connection_flags.h"
#include "backend/control/diagnose.h"
#include "backend/control/diagnosis_archive.h"
#include "backend/control/history_location.h"
#include "db/history/history.h"

namespace {

namespace control = runplane::control;
namespace dx = runplane::diagnosis;

struct DiagnoseOptions {
    std::string runId;
    std::vector<std::string> addresses;
    std::string history = control::defaultHistoryPath();
    bool json = false;
    bool native = false;
    bool stored = false;
    bool list = false;
    bool noStore = false;
    std::string archive;  // --archive FILE.tar.gz
    std::int64_t id = 0;  // --id N: that stored diagnosis
    double timeout = 8;
    runplane::cli::ConnectionFlags connection;
};

void printDiagnosis(const dx::RunDiagnosis& d, bool json) {
    if (json) {
        std::cout << dx::boundedJsonText(d, control::kDiagnosisMaxDocumentBytes) << "\n";
    } else {
        std::cout << dx::formatDiagnosis(d);
    }
}

// --archive: the diagnosis (the given document, else the stored one) as one .tar.gz
// (docs/diagnosis.md "Export"). Says where it went on stderr; exit 2 when it could not.
void writeArchive(const DiagnoseOptions& o, const std::string& documentJson,
                  runplane::cli::CliContext& context) {
    control::DiagnosisArchiveSource source;
    source.historyPath = o.history;
    source.runId = runplane::RunId(o.runId);
    source.diagnosisJson = documentJson;
    source.diagnosisId = o.id;
    auto written = control::exportDiagnosisArchive(source, o.archive);
    if (!written) {
        std::cerr << "diagnose: no archive: " << written.error() << "\n";
        context.exitCode = 2;
        return;
    }
    std::cerr << "diagnose: wrote " << written->path << " (" << written->files.size()
              << " files in " << written->folder << "/, " << written->bytes << " bytes)\n";
}

void runStored(const DiagnoseOptions& o, runplane::cli::CliContext& context) {
    auto history = runplane::db::History::open(o.history);
    if (!history) {
        std::cerr << "diagnose: " << history.error() << "\n";
        context.exitCode = 2;
        return;
    }
    auto stored = (*history)->listDiagnoses(runplane::RunId(o.runId), !o.list);
    if (!stored) {
        std::cerr << "diagnose: " << stored.error() << "\n";
        context.exitCode = 2;
        return;
    }
    if (stored->empty()) {
        std::cerr << "diagnose: no stored diagnosis of run '" << o.runId << "' in " << o.history
                  << "\n";
        context.exitCode = 1;
        return;
    }
    if (o.list) {
        for (const auto& r : *stored) {
            if (o.json) {
                std::cout << nlohmann::json{{"id", r.id},
                                            {"t_ns", r.tNs},
                                            {"trigger", r.trigger},
                                            {"headline", r.headline}}
                                 .dump()
                          << "\n";
            } else {
                std::cout << r.id << "  " << r.tNs << "  " << r.trigger << "  " << r.headline
                          << "\n";
            }
        }
        return;
    }
    const runplane::db::DiagnosisRecord* chosen = &stored->front();
    if (o.id > 0) {
        chosen = nullptr;
        for (const auto& r : *stored) {
            chosen = r.id == o.id ? &r : chosen;
        }
        if (chosen == nullptr) {
            std::cerr << "diagnose: no stored diagnosis " << o.id << " of run '" << o.runId
                      << "' (--list shows them)\n";
            context.exitCode = 1;
            return;
        }
    }
    const auto& newest = *chosen;
    if (!o.archive.empty()) {
        writeArchive(o, newest.json, context);
        if (context.exitCode != 0) {
            return;
        }
    }
    if (o.json) {
        std::cout << newest.json << "\n";
        return;
    }
    const auto j = nlohmann::json::parse(newest.json, nullptr, false);
    auto d = j.is_discarded()
                 ? runplane::Result<dx::RunDiagnosis>(runplane::Error{
                       "the stored diagnosis " + std::to_string(newest.id) + " is not JSON"})
                 : dx::runDiagnosisFromJson(j);
    if (!d) {
        std::cerr << "diagnose: " << d.error() << "\n";
        context.exitCode = 2;
        return;
    }
    printDiagnosis(*d, false);
}

void runDiagnose(const DiagnoseOptions& o, runplane::cli::CliContext& context) {
    if (o.stored || o.list || o.id > 0) {
        runStored(o, context);
        return;
    }
    if (!(o.timeout > 0 && o.timeout <= 60)) {
        std::cerr << "diagnose: --timeout " << o.timeout << " is outside (0, 60] seconds\n";
        context.exitCode = 2;
        return;
    }
    auto connection = runplane::cli::resolveConnection(o.connection);
    if (!connection) {
        std::cerr << "diagnose: " << connection.error() << "\n";
        context.exitCode = 2;
        return;
    }
    std::vector<std::string> addresses;
    for (const auto& a : o.addresses) {
        addresses.push_back(runplane::cli::resolveAddress(a, *connection));
    }
    if (addresses.empty()) {
        auto fromHistory = control::runNodeAddresses(o.history, runplane::RunId(o.runId));
        if (fromHistory && !fromHistory->empty()) {
            addresses = std::move(*fromHistory);
        } else {
            auto profile = runplane::cli::addressesOrProfile({}, *connection, "diagnose");
            if (!profile) {
                std::cerr << "diagnose: no node address for run '" << o.runId
                          << "': " << (fromHistory ? "the history lists none" : fromHistory.error())
                          << "; give addresses or --cluster\n";
                context.exitCode = 2;
                return;
            }
            addresses = std::move(*profile);
        }
    }
    control::DiagnoseSpec spec;
    spec.runId = runplane::RunId(o.runId);
    spec.addresses = addresses;
    spec.native = o.native;
    spec.collectTimeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout * 1000));
    spec.callTimeout = spec.collectTimeout + std::chrono::seconds(6);
    spec.client = connection->client;
    const dx::RunDiagnosis d = control::diagnoseAcross(spec);
    if (!o.noStore) {
        if (auto s = control::storeDiagnosis(o.history, d); !s) {
            std::cerr << "diagnose: not stored in the history: " << s.error() << "\n";
        }
    }
    if (!o.archive.empty()) {
        writeArchive(o, dx::boundedJsonText(d, control::kDiagnosisMaxDocumentBytes), context);
        if (context.exitCode != 0) {
            return;
        }
    }
    printDiagnosis(d, o.json);
    bool anyNode = false;
    for (const auto& n : d.nodes) {
        anyNode = anyNode || n.error.empty();
    }
    context.exitCode = anyNode ? 0 : 1;
}

const bool kDiagnoseGroup = runplane::cli::registerCommands([](CLI::App& app,
                                                               runplane::cli::CliContext& context) {
    auto o = std::make_shared<DiagnoseOptions>();
    CLI::App* cmd = app.add_subcommand(
        "diagnose",
        "Diagnose a hung or failed run from every node at once (NCCL RAS, py-spy stacks, GPU "
        "state, kernel log, last output), print one verdict and store it with the run. Exit 0 "
        "when at least one node answered, 1 when none did, 2 on usage or I/O errors");
    cmd->add_option("run", o->runId, "Run id")->required();
    cmd->add_option("addresses", o->addresses,
                    "Daemon addresses HOST:PORT (default: the run's nodes in the history, else "
                    "the --cluster nodes)");
    cmd->add_option("--history", o->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    cmd->add_flag("--json", o->json, "print the diagnosis as JSON");
    cmd->add_flag("--native", o->native, "py-spy --native: C/C++ frames too");
    cmd->add_flag("--stored", o->stored,
                  "print the newest stored diagnosis of the run (no node is asked)");
    cmd->add_flag("--list", o->list, "list the stored diagnoses of the run");
    cmd->add_flag("--no-store", o->noStore, "do not store the diagnosis in the history");
    cmd->add_option("--archive", o->archive,
                    "also write the diagnosis as one .tar.gz to attach to a bug report (verdict, "
                    "every node's JSON, stacks, RAS, kernel lines, the run's recipe, events and "
                    "last output; README.txt inside says what each file is)");
    cmd->add_option("--id", o->id, "with --stored/--archive: this stored diagnosis (--list)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--timeout", o->timeout, "seconds each node may spend on RAS and on each stack")
        ->capture_default_str();
    runplane::cli::addConnectionFlags(cmd, o->connection);
    cmd->callback([o, &context] { runDiagnose(*o, context); });
});

}  // namespace
