#include "backend/cli/run_lineage_cli.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "backend/control/text_format.h"
#include "common/ids.h"
#include "db/history/history.h"
#include "db/history/run_lineage.h"

namespace runplane::cli {

namespace {

using nlohmann::json;

std::int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::string stepText(std::int64_t step) {
    return step >= 0 ? "@" + std::to_string(step) : "";
}

json parentJson(const db::History::RunParent& p) {
    return {{"run_id", p.runId}, {"parent", p.parentId}, {"kind", p.kind},
            {"step", p.step},    {"source", p.source},   {"t_ns", p.tNs}};
}

struct ShowOptions {
    std::string history;
    std::string run;
    bool json = false;
};

struct ParentOptions {
    std::string history;
    std::string run;
    std::string parent;  // RUN[@STEP]
    bool fork = false;
    bool clear = false;
};

std::unique_ptr<db::History> openHistory(const std::string& path, bool readOnly, const char* cmd,
                                         CliContext& context) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        std::cerr << "runplanectl runs " << cmd << ": no history at " << path << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    db::OpenOptions open;
    open.readOnly = readOnly;
    auto history = db::History::open(path, open);
    if (!history.ok()) {
        std::cerr << "runplanectl runs " << cmd << ": " << history.error() << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    return std::move(*history);
}

void runShow(const ShowOptions& o, CliContext& context) {
    auto h = openHistory(o.history, true, "show", context);
    if (h == nullptr) {
        return;
    }
    auto fail = [&](const std::string& m) {
        std::cerr << "runplanectl runs show: " << m << "\n";
        context.exitCode = 2;
    };
    auto record = h->run(RunId{o.run});
    if (!record.ok()) {
        return fail(record.error());
    }
    if (!record->has_value()) {
        return fail("no run '" + o.run + "' in " + o.history);
    }
    const db::RunRecord& r = **record;
    auto chain = db::lineageChain(*h, r.id);
    auto links = h->runParents();
    auto notes = h->runAnnotations();
    if (!chain.ok() || !links.ok() || !notes.ok()) {
        return fail(!chain.ok() ? chain.error() : !links.ok() ? links.error() : notes.error());
    }
    json j = {{"id", r.id.value()},
              {"name", r.name},
              {"status", std::string(db::toString(r.state))},
              {"started_ns", r.startedNs},
              {"ended_ns", r.endedNs},
              {"nodes", r.nodes},
              {"message", r.message},
              {"provenance", json::parse(r.provenanceJson, nullptr, false)},
              {"tags", json::array()},
              {"note", ""},
              {"parent", nullptr},
              {"ancestors", json::array()},
              {"children", json::array()}};
    for (const auto& [id, a] : *notes) {
        if (id == r.id.value()) {
            j["tags"] = a.tags;
            j["note"] = a.note;
        }
    }
    for (std::size_t i = 0; i < chain->size(); ++i) {
        (i == 0 ? j["parent"] : j["ancestors"].emplace_back()) = parentJson((*chain)[i]);
    }
    for (const auto& l : *links) {
        if (l.parentId == r.id.value()) {
            j["children"].push_back(parentJson(l));
        }
    }
    if (o.json) {
        std::cout << j.dump(2) << "\n";
        return;
    }
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"id", r.id.value()});
    rows.push_back({"name", r.name});
    rows.push_back({"status", std::string(db::toString(r.state))});
    rows.push_back({"started", control::formatLocalTime(r.startedNs)});
    rows.push_back({"ended", r.endedNs > 0 ? control::formatLocalTime(r.endedNs) : "-"});
    std::string nodes;
    for (const auto& n : r.nodes) {
        nodes += (nodes.empty() ? "" : ",") + n;
    }
    rows.push_back({"nodes", nodes.empty() ? "-" : nodes});
    if (j["provenance"].is_object() && j["provenance"].contains("origin")) {
        rows.push_back({"origin", j["provenance"]["origin"].value("format", std::string("?"))});
    }
    if (j["provenance"].is_object() && j["provenance"].contains("argv") &&
        j["provenance"]["argv"].is_array()) {
        std::string argv;
        for (const auto& a : j["provenance"]["argv"]) {
            argv += (argv.empty() ? "" : " ") + (a.is_string() ? a.get<std::string>() : a.dump());
        }
        rows.push_back({"argv", argv});
    }
    std::string tags;
    for (const auto& t : j["tags"]) {
        tags += (tags.empty() ? "" : ",") + t.get<std::string>();
    }
    rows.push_back({"tags", tags.empty() ? "-" : tags});
    rows.push_back(
        {"note", j["note"].get<std::string>().empty() ? "-" : j["note"].get<std::string>()});
    if (chain->empty()) {
        rows.push_back({"parent", "-"});
    }
    for (std::size_t i = 0; i < chain->size(); ++i) {
        const auto& p = (*chain)[i];
        rows.push_back({i == 0 ? "parent" : "ancestor",
                        lineageCell(p.kind, p.parentId, p.step) + " (" + p.source + ")"});
    }
    for (const auto& l : *links) {
        if (l.parentId == r.id.value()) {
            rows.push_back({"child", l.runId + " (" + l.kind + stepText(l.step) + ")"});
        }
    }
    if (!r.message.empty()) {
        rows.push_back({"message", r.message});
    }
    for (const auto& row : rows) {
        std::cout << row[0] << std::string(row[0].size() < 10 ? 10 - row[0].size() : 1, ' ')
                  << row[1] << "\n";
    }
}

void runParentCmd(const ParentOptions& o, CliContext& context) {
    auto h = openHistory(o.history, false, "parent", context);
    if (h == nullptr) {
        return;
    }
    auto fail = [&](const std::string& m) {
        std::cerr << "runplanectl runs parent: " << m << "\n";
        context.exitCode = 2;
    };
    if (o.clear) {
        auto cleared = h->clearRunParent(RunId{o.run});
        if (!cleared.ok()) {
            return fail(cleared.error());
        }
        std::cout << (*cleared ? "cleared the parent of " : "run had no parent: ") << o.run << "\n";
        return;
    }
    if (o.parent.empty()) {
        return fail("give PARENT[@STEP], or --clear");
    }
    auto parsed = db::parseRunAtStep(o.parent);
    if (!parsed.ok()) {
        return fail(parsed.error());
    }
    db::History::RunParent p;
    p.runId = o.run;
    p.parentId = parsed->first;
    p.step = parsed->second;
    p.kind = o.fork ? "fork" : "resume";
    p.source = "user";
    p.tNs = nowNs();
    if (Status s = h->setRunParent(p); !s.ok()) {
        return fail(s.error());
    }
    std::cout << o.run << ": " << lineageCell(p.kind, p.parentId, p.step) << "\n";
}

}  // namespace

std::string lineageCell(const std::string& kind, const std::string& parent, long long step) {
    if (parent.empty()) {
        return "";
    }
    return kind + " of " + parent + stepText(step);
}

std::string checkNamedParent(const std::string& historyPath, const std::string& resumes,
                             const std::string& forks) {
    if (!resumes.empty() && !forks.empty()) {
        return "--resumes and --forks: give one parent";
    }
    const std::string& named = resumes.empty() ? forks : resumes;
    if (named.empty()) {
        return "";
    }
    auto parsed = db::parseRunAtStep(named);
    if (!parsed.ok()) {
        return std::string(resumes.empty() ? "--forks " : "--resumes ") + parsed.error();
    }
    db::OpenOptions ro;
    ro.readOnly = true;
    std::error_code ec;
    auto known = std::filesystem::exists(historyPath, ec)
                     ? db::History::open(historyPath, ro)
                     : Result<std::unique_ptr<db::History>>(Error{"no history at " + historyPath});
    auto parent = known.ok() ? (*known)->run(RunId{parsed->first})
                             : Result<std::optional<db::RunRecord>>(Error{known.error()});
    if (!parent.ok() || !parent->has_value()) {
        return "parent run '" + parsed->first + "' is not in the history (" +
               (parent.ok() ? historyPath : parent.error()) + ")";
    }
    return "";
}

std::string recordLaunchLineage(const std::string& historyPath, const std::string& runId,
                                const std::string& resumes, const std::string& forks,
                                const std::vector<std::string>& argv, const std::string& workdir) {
    auto history = db::History::open(historyPath);
    if (!history.ok()) {
        return "error: " + history.error();
    }
    std::optional<db::History::RunParent> parent;
    if (!resumes.empty() || !forks.empty()) {
        auto parsed = db::parseRunAtStep(resumes.empty() ? forks : resumes);
        if (!parsed.ok()) {
            return "error: " + parsed.error();
        }
        parent = db::History::RunParent{};
        parent->runId = runId;
        parent->parentId = parsed->first;
        parent->step = parsed->second;
        parent->kind = resumes.empty() ? "fork" : "resume";
        parent->source = "flag";
    } else {
        auto runs = (*history)->listRuns();
        if (!runs.ok()) {
            return "error: " + runs.error();
        }
        parent = db::detectParent(*runs, runId, argv, workdir);
        if (!parent) {
            return "";
        }
    }
    parent->tNs = nowNs();
    if (Status s = (*history)->setRunParent(*parent); !s.ok()) {
        return "error: " + s.error();
    }
    return "recorded: run " + runId + " is a " +
           lineageCell(parent->kind, parent->parentId, parent->step) +
           (parent->source == "argv" ? " (from the checkpoint its argv loads)" : "");
}

void addRunLineageCommands(CLI::App& runs, CliContext& context) {
    auto show = std::make_shared<ShowOptions>();
    show->history = control::defaultHistoryPath();
    auto* showCmd = runs.add_subcommand(
        "show", "One run: status, origin, argv, tags, note, parent, ancestors and children");
    showCmd->add_option("run", show->run, "Run id")->required();
    showCmd->add_option("--history", show->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    showCmd->add_flag("--json", show->json, "Print JSON");
    showCmd->callback([show, &context] { runShow(*show, context); });

    auto parent = std::make_shared<ParentOptions>();
    parent->history = control::defaultHistoryPath();
    auto* parentCmd = runs.add_subcommand(
        "parent", "Set or change the run a run resumed (or, --fork, forked) from");
    parentCmd->add_option("run", parent->run, "Run id")->required();
    parentCmd->add_option("parent", parent->parent,
                          "PARENT or PARENT@STEP (the parent's step it branched at)");
    parentCmd->add_flag("--fork", parent->fork, "A fork (its own curve after STEP), not a resume");
    parentCmd->add_flag("--clear", parent->clear, "Remove the run's parent");
    parentCmd->add_option("--history", parent->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    parentCmd->callback([parent, &context] { runParentCmd(*parent, context); });
}

}  // namespace runplane::cli
