#include "backend/launch/miles_launcher.h"

#include <charconv>
#include <optional>

#include "backend/launch/shell_text.h"
#include "backend/plan/recipe_paths.h"

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

bool isInklingLauncher(std::string_view script) {
    const auto slash = script.find_last_of('/');
    return (slash == std::string_view::npos ? script : script.substr(slash + 1)) ==
           "run_inkling.py";
}

namespace {

struct InklingLayout {
    int tp = 1;
    int pp = 1;
    int ep = 1;
    std::optional<int> lastStageLayers;
};

// run_inkling.py _get_parallel_config: the verified profiles, in its order
std::optional<InklingLayout> inklingLayout(const std::string& model, bool fullyAsync,
                                           int actorNodes, int gpusPerNode) {
    const long long total = static_cast<long long>(actorNodes) * gpusPerNode;
    if (fullyAsync && model == "Inkling" && total == 32) {
        return InklingLayout{4, 2, 16, std::nullopt};
    }
    if (model == "Inkling-Small" && total == 32) {
        return InklingLayout{4, 8, 4, 7};
    }
    if ((model == "Inkling-4layer" || model == "Inkling-Small-4layer") && actorNodes == 1) {
        return InklingLayout{4, 1, 4, std::nullopt};
    }
    if (gpusPerNode == 4 && total == 64) {
        return InklingLayout{4, 4, 16, 15};
    }
    if (gpusPerNode == 4 && total == 48) {
        return InklingLayout{4, 3, 16, std::nullopt};
    }
    return std::nullopt;
}

}  // namespace

void readInklingLauncher(const std::vector<ScriptFlag>& flags, const std::set<std::string>& touched,
                         const std::string& file, int line, Recipe& r,
                         std::vector<LaunchNote>& notes) {
    // the launcher's own options, as the command gives them (the last occurrence wins)
    std::string model = "Inkling";
    std::string mode = "full";
    bool fullyAsync = false;
    int rolloutNodes = 4;
    int gpusPerEngine = 16;
    int loraRank = 32;
    int loraAlpha = 32;
    std::optional<int> numNodes;
    std::optional<int> gpusPerNode;
    for (const auto& f : flags) {
        if (f.inExtraArgs || !f.known) {
            continue;
        }
        const std::string value = f.values.size() == 1 ? f.values[0] : "";
        const auto number = [&]() -> std::optional<int> {
            auto n = parseInt(value);
            return n && *n > 0 && *n < (1 << 15) ? std::optional<int>(int(*n)) : std::nullopt;
        };
        if (f.flag == "--model-name" && !value.empty()) {
            model = value;
        } else if (f.flag == "--train-mode" && !value.empty()) {
            mode = value;
        } else if (f.flag == "--fully-async") {
            fullyAsync = true;
        } else if (f.flag == "--no-fully-async") {
            fullyAsync = false;
        } else if (f.flag == "--rollout-num-nodes" && number()) {
            rolloutNodes = *number();
        } else if (f.flag == "--rollout-num-gpus-per-engine" && number()) {
            gpusPerEngine = *number();
        } else if (f.flag == "--lora-rank" && number()) {
            loraRank = *number();
        } else if (f.flag == "--lora-alpha" && number()) {
            loraAlpha = *number();
        } else if (f.flag == "--num-nodes" && number()) {
            numNodes = number();
        } else if (f.flag == "--num-gpus-per-node" && number()) {
            gpusPerNode = number();
        }
    }
    const bool lora = mode == "lora";
    std::vector<std::string> decided;
    auto untouched = [&](FieldPath field) { return touched.count(field.str()) == 0; };
    const int gpn = gpusPerNode.value_or(4);  // ScriptArgs.num_gpus_per_node = 4
    if (untouched(fields::kHardwareGpusPerNode)) {
        r.hardware.gpusPerNode = gpn;
        if (!gpusPerNode) {
            decided.push_back("4 GPUs per node (its default)");
        }
    }
    const int nodes = numNodes.value_or(r.cluster.nodes);
    int actorNodes = nodes;
    if (untouched(fields::kPlacement)) {
        if (fullyAsync) {
            r.placement = Placement::Disaggregated;
            actorNodes = nodes - rolloutNodes;
            r.trainer.nodes = actorNodes;
            r.rollout.numGpus = rolloutNodes * gpn;
            r.launcher.entryPoint = "train_async.py";
            decided.push_back("disaggregated (--fully-async): " + std::to_string(actorNodes) +
                              " trainer nodes, " + std::to_string(rolloutNodes * gpn) +
                              " rollout GPUs, train_async.py");
        } else {
            r.placement = Placement::Colocate;
            decided.push_back("colocate");
        }
    }
    if (untouched(fields::kBatchNSamplesPerPrompt)) {
        r.batch.nSamplesPerPrompt = 8;
        decided.push_back("8 samples per prompt");
    }
    if (untouched(fields::kBatchNumRollout) && !r.batch.numEpoch) {
        r.batch.numRollout = 100;
        decided.push_back("--num-rollout 100 (its default)");
    }
    if (untouched(fields::kBatchRolloutBatchSize)) {
        r.batch.rolloutBatchSize = 32;
        decided.push_back("rollout batch 32 (its default)");
    }
    if (untouched(fields::kBatchGlobalBatchSize)) {
        r.batch.globalBatchSize = 64;
        decided.push_back("global batch 64 (its default)");
    }
    if (untouched(fields::kRolloutMaxResponseLen)) {
        r.rollout.maxResponseLen = 4096;
        decided.push_back("response length 4096 (its default)");
    }
    const bool layoutTouched = !untouched(fields::kTrainerTp) || !untouched(fields::kTrainerPp) ||
                               !untouched(fields::kTrainerEp);
    if (!layoutTouched) {
        if (auto layout = inklingLayout(model, fullyAsync, actorNodes, gpn)) {
            r.trainer.tp = layout->tp;
            r.trainer.pp = layout->pp;
            r.trainer.ep = layout->ep;
            r.trainer.etp = 1;
            r.trainer.sequenceParallel = true;
            r.trainer.decoderLastPipelineNumLayers = layout->lastStageLayers;
            decided.push_back(
                "TP " + std::to_string(layout->tp) + " SP PP " + std::to_string(layout->pp) +
                " EP " + std::to_string(layout->ep) + " ETP 1" +
                (layout->lastStageLayers
                     ? " (last stage " + std::to_string(*layout->lastStageLayers) + " layers)"
                     : std::string()) +
                " from its profile for " + model + " on " +
                std::to_string(static_cast<long long>(actorNodes) * gpn) + " GPUs");
        } else {
            notes.push_back({NoteLevel::Warning, file, line, "trainer.tp",
                             "run_inkling.py has no parallel profile for " + model + " on " +
                                 std::to_string(actorNodes) + " x " + std::to_string(gpn) +
                                 " trainer GPUs (its _get_parallel_config raises "
                                 "NotImplementedError there); the trainer's layout is not known"});
        }
    }
    if (untouched(fields::kTrainerRecompute)) {
        r.trainer.recompute = true;
        decided.push_back("full recompute");
    }
    if (untouched(fields::kRolloutGpusPerEngine)) {
        r.rollout.gpusPerEngine = fullyAsync && !lora ? 16 : gpusPerEngine;
        decided.push_back(std::to_string(r.rollout.gpusPerEngine) + " GPUs per engine");
    }
    if (untouched(fields::kRolloutMemFraction)) {
        r.rollout.memFraction = lora ? 0.65 : (fullyAsync ? 0.8 : 0.6);
        decided.push_back("engine memory fraction " +
                          std::string(lora ? "0.65" : (fullyAsync ? "0.8" : "0.6")));
    }
    if (lora) {
        if (untouched(fields::kLoraRank)) {
            r.lora.rank = loraRank;
            r.lora.alpha = loraAlpha;
        }
        if (untouched(fields::kLoraTargetModules)) {
            r.lora.targetModules = {"all-linear"};
        }
        if (untouched(fields::kBatchDynamicBatchSize)) {
            r.batch.dynamicBatchSize = true;
            r.batch.maxTokensPerGpu = 4096;
        }
        if (untouched(fields::kRolloutEpSize)) {
            r.rollout.epSize = r.rollout.gpusPerEngine;
        }
        decided.push_back("LoRA rank " + std::to_string(r.lora.rank) + " on all-linear, dynamic " +
                          "batch of 4096 tokens, engine EP " + std::to_string(r.rollout.epSize));
    } else if (!fullyAsync && untouched(fields::kMemoryOffloadTrainTarget)) {
        r.memory.offloadTrainTarget = OffloadTarget::Disk;
        decided.push_back("the paused trainer offloaded to disk");
    }
    std::string list;
    for (const auto& d : decided) {
        list += (list.empty() ? "" : ", ") + d;
    }
    notes.push_back({NoteLevel::Info, file, line, "launcher.script",
                     "scripts/run_inkling.py train (" + mode +
                         " mode) decides these itself, and the recipe takes them: " + list +
                         " (radixark/miles@067dc320 scripts/run_inkling.py)"});
}

}  // namespace runplane::plan::launch::detail
