#include "backend/launch/miles_launcher.h"

#include <charconv>

namespace runplane::plan::launch::detail {

namespace {

// radixark/miles@57b381de scripts/run_qwen3_8.py: `hardware: Literal["B300", "GB300"] = "B300"`
// (anything but GB300 adds --sglang-enable-weights-cpu-backup, the ~3 TB full engine backup) and
// a fixed `--sglang-mem-fraction-static 0.7`; `args.extra_args` is appended last, so a value
// passed there wins (argparse keeps the last occurrence).
constexpr std::string_view kQwen38Hardware[] = {"B300", "GB300"};

constexpr MilesLauncherFacts kLaunchers[] = {
    {"run_qwen3_8.py", kQwen38Hardware, "B300", 0.7,
     "radixark/miles@57b381de:scripts/run_qwen3_8.py"},
};

}  // namespace

const MilesLauncherFacts* milesLauncherFacts(std::string_view script) {
    const auto slash = script.find_last_of('/');
    const std::string_view base =
        slash == std::string_view::npos ? script : script.substr(slash + 1);
    for (const auto& facts : kLaunchers) {
        if (base == facts.script) {
            return &facts;
        }
    }
    return nullptr;
}

bool alwaysInExtraArgs(std::string_view field) {
    return field == "rollout.mem_fraction";
}

void readLauncherDefaults(const MilesLauncherFacts& facts, const std::set<std::string>& touched,
                          const std::string& file, int line, Recipe& r,
                          std::vector<LaunchNote>& notes) {
    const std::string script(facts.script);
    if (!facts.hardware.empty() && !touched.count("hardware.gpu")) {
        r.hardware.gpu = std::string(facts.hardwareDefault);
        notes.push_back({NoteLevel::Info, file, line, "hardware.gpu",
                         "no --hardware: " + script + " runs as " + r.hardware.gpu +
                             " (its default); hardware.gpu is set to it, the GPU memory and host "
                             "RAM are not known from the command"});
    }
    if (!touched.count("rollout.mem_fraction")) {
        r.rollout.memFraction = facts.memFraction;
        char text[32];
        const auto [end, ec] = std::to_chars(text, text + sizeof(text), facts.memFraction);
        (void)ec;
        notes.push_back({NoteLevel::Info, file, line, "rollout.mem_fraction",
                         script + " passes --sglang-mem-fraction-static " + std::string(text, end) +
                             " itself; rollout.mem_fraction is set to it (an export writes it "
                             "in --extra-args, which the launcher appends last)"});
    }
}

}  // namespace runplane::plan::launch::detail
