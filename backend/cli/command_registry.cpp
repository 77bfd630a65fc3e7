#include "backend/cli/command_registry.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <string_view>

namespace runplane::cli {
namespace {
std::vector<CommandAdder>& registry() {
    static std::vector<CommandAdder> adders;  // function-local: safe across translation units
    return adders;
}
}  // namespace

bool registerCommands(CommandAdder adder) {
    registry().push_back(std::move(adder));
    return true;
}

const std::vector<CommandAdder>& registeredCommands() {
    return registry();
}

namespace {

// --help's sections and their commands, in the order a newcomer meets them (docs/user-guide.md).
struct HelpSection {
    std::string_view heading;
    std::vector<std::string_view> commands;
};
const std::vector<HelpSection>& helpSections() {
    static const std::vector<HelpSection> sections{
        {"Design a run", {"validate", "plan", "argv", "import", "export"}},
        {"Start and stop runs", {"submit", "dispatch", "stop", "logs"}},
        {"Watch nodes and runs", {"nodes", "watch", "memory", "nccl", "diagnose", "alerts"}},
        {"The run history", {"runs", "compare", "history", "import-runs"}},
        {"Clusters", {"cluster"}},
    };
    return sections;
}

// The top-level help lists the commands by section; a command's own help is CLI11's.
class SectionedHelp : public CLI::Formatter {
  public:
    std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
        if (app->get_parent() != nullptr || mode != CLI::AppFormatMode::Normal) {
            return CLI::Formatter::make_subcommands(app, mode);
        }
        const auto subcommands = app->get_subcommands({});
        std::vector<const CLI::App*> listed;
        std::string out;
        auto section = [&](std::string_view heading, const std::vector<const CLI::App*>& subs) {
            if (subs.empty()) {
                return;
            }
            out += "\n" + std::string(heading) + ":\n";
            for (const auto* sub : subs) {
                out += make_subcommand(sub);
                listed.push_back(sub);
            }
        };
        for (const auto& s : helpSections()) {
            std::vector<const CLI::App*> subs;
            for (const auto& name : s.commands) {
                for (const auto* sub : subcommands) {
                    if (sub->get_name() == name) {
                        subs.push_back(sub);
                    }
                }
            }
            section(s.heading, subs);
        }
        std::vector<const CLI::App*> rest;
        for (const auto* sub : subcommands) {
            if (std::find(listed.begin(), listed.end(), sub) == listed.end()) {
                rest.push_back(sub);
            }
        }
        section("Other commands", rest);
        return out;
    }
};

}  // namespace

void addRegisteredCommands(CLI::App& app, CliContext& context) {
    for (const auto& add : registry()) {
        add(app, context);
    }
    app.formatter(std::make_shared<SectionedHelp>());  // after: each command keeps CLI11's own
}

}  // namespace runplane::cli
