#include "backend/cli/command_registry.h"

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

}  // namespace runplane::cli
