#include "backend/cli/run_annotations_cli.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "backend/cli/command_registry.h"
#include "backend/control/history_location.h"
#include "common/ids.h"
#include "db/history/history.h"

namespace runplane::cli {

namespace {

struct AnnotateOptions {
    std::string history;
    std::string run;
    std::string value;  // the tag or the note text
    bool remove = false;
};

// Opens the history for writing; refuses one that does not exist (nothing to annotate).
std::unique_ptr<db::History> openForWrite(const std::string& path, const char* cmd,
                                          CliContext& context) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        std::cerr << "runplanectl runs " << cmd << ": no history at " << path << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    auto history = db::History::open(path);
    if (!history.ok()) {
        std::cerr << "runplanectl runs " << cmd << ": " << history.error() << "\n";
        context.exitCode = 2;
        return nullptr;
    }
    return std::move(*history);
}

}  // namespace

void addRunAnnotationCommands(CLI::App& runs, CliContext& context) {
    auto tag = std::make_shared<AnnotateOptions>();
    tag->history = control::defaultHistoryPath();
    auto* tagCmd = runs.add_subcommand("tag", "Tag a run (the run filters search tags)");
    tagCmd->add_option("run", tag->run, "Run id")->required();
    tagCmd->add_option("tag", tag->value, "Tag: 1-64 characters, no spaces or commas")->required();
    tagCmd->add_flag("--remove", tag->remove, "Remove the tag instead");
    tagCmd->add_option("--history", tag->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    tagCmd->callback([tag, &context] {
        auto h = openForWrite(tag->history, "tag", context);
        if (h == nullptr) {
            return;
        }
        if (tag->remove) {
            auto removed = h->removeRunTag(RunId(tag->run), tag->value);
            if (!removed.ok()) {
                std::cerr << "runplanectl runs tag: " << removed.error() << "\n";
                context.exitCode = 2;
                return;
            }
            std::cout << (*removed ? "removed tag " : "run had no tag ") << tag->value << " ("
                      << tag->run << ")\n";
            return;
        }
        if (Status s = h->addRunTag(RunId(tag->run), tag->value); !s.ok()) {
            std::cerr << "runplanectl runs tag: " << s.error() << "\n";
            context.exitCode = 2;
            return;
        }
        std::cout << "tagged " << tag->run << ": " << tag->value << "\n";
    });

    auto note = std::make_shared<AnnotateOptions>();
    note->history = control::defaultHistoryPath();
    auto* noteCmd = runs.add_subcommand(
        "note", "Set a run's note (\"\" removes it; the run filters search it)");
    noteCmd->add_option("run", note->run, "Run id")->required();
    noteCmd->add_option("text", note->value, "The note (at most 64 KiB)")->required();
    noteCmd->add_option("--history", note->history, "History file ($RUNPLANE_HISTORY)")
        ->capture_default_str();
    noteCmd->callback([note, &context] {
        auto h = openForWrite(note->history, "note", context);
        if (h == nullptr) {
            return;
        }
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
        if (Status s = h->setRunNote(RunId(note->run), note->value, now); !s.ok()) {
            std::cerr << "runplanectl runs note: " << s.error() << "\n";
            context.exitCode = 2;
            return;
        }
        std::cout << (note->value.empty() ? "removed the note of " : "noted ") << note->run << "\n";
    });
}

}  // namespace runplane::cli
