// The model and the bring-up of an imported script: model file stems resolved against the
// catalog (variants by megatron_model_type), MODEL_ARGS cross-checked against the catalog's shape
// or, for a model the catalog lacks, read as an inline shape; the head's `ray start` / `ray stop`
// words and the pre-launch steps.

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "backend/launch/import_parts.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {

std::pair<std::string, std::string> resolveStem(const std::string& stem,
                                                const ModelCatalog* catalog,
                                                std::vector<LaunchNote>& notes,
                                                const std::string& file) {
    if (catalog == nullptr || catalog->find(stem) != nullptr ||
        catalog->findUnsized(stem) != nullptr) {
        return {stem, ""};  // an unsized model: validate says why (model.unsized)
    }
    for (const auto& m : catalog->models()) {
        for (const auto& v : m.variants) {
            if (v.megatronModelType == stem) {
                return {m.name, v.name};
            }
        }
    }
    notes.push_back({NoteLevel::Warning, file, 0, "model.name",
                     "model file " + stem + ".sh names no model of the catalog"});
    return {stem, ""};
}

std::string catalogModelNamed(std::string name, const ModelCatalog* catalog) {
    while (!name.empty() && name.back() == '/') {
        name.pop_back();
    }
    name = baseName(name);
    if (catalog == nullptr || name.empty()) {
        return "";
    }
    static const char* const kSuffixes[] = {"-instruct", "-thinking", "-bf16", "-fp8",  "-int4",
                                            "-nvfp4",    "-base",     "-it",   "-2507", "-hf"};
    std::string want = asciiLower(name);
    for (bool stripped = true; stripped;) {
        for (const auto& m : catalog->models()) {
            if (asciiLower(m.name) == want) {
                return m.name;
            }
        }
        stripped = false;
        for (const char* suffix : kSuffixes) {
            const std::string sfx = suffix;
            if (want.size() > sfx.size() &&
                want.compare(want.size() - sfx.size(), sfx.size(), sfx) == 0) {
                want.resize(want.size() - sfx.size());
                stripped = true;
                break;
            }
        }
    }
    return "";
}

void modelWithoutModelFile(const Interpreted& in, const ModelCatalog* catalog,
                           const std::string& path, Recipe& r, std::vector<LaunchNote>& notes) {
    // the miles launcher's --model-name, else the checkpoint directory
    std::string named;
    for (const auto& f : in.flags) {
        if (f.flag == "--model-name" && f.values.size() == 1 && f.known) {
            named = f.values[0];
        }
    }
    const bool fromName = in.milesScript && !named.empty();
    const std::string source = fromName ? named : r.checkpoints.hfCheckpoint;
    const std::string what = (fromName ? "--model-name " : "--hf-checkpoint ") + source;
    std::string base = source;
    while (base.size() > 1 && base.back() == '/') {
        base.pop_back();
    }
    base = baseName(base);
    if (const std::string catalogName = catalogModelNamed(source, catalog); !catalogName.empty()) {
        r.model.name = catalogName;
        notes.push_back({NoteLevel::Warning, path, 0, "model.name",
                         "the script sources no models/<name>.sh: model '" + catalogName +
                             "' is taken from " + what + "; name another with --model NAME"});
    } else if (!base.empty() && base.find('$') == std::string::npos) {
        r.model.name = base;
        notes.push_back({NoteLevel::Warning, path, 0, "model.name",
                         "the script sources no models/<name>.sh and " + what +
                             " names no model of the catalog: model.name is '" + base +
                             "', which validate cannot size; name a catalog model with "
                             "--model NAME"});
    } else {
        notes.push_back({NoteLevel::Error, path, 0, "model.name",
                         in.milesScript ? "the miles launcher chooses its model itself; name it "
                                          "with --model NAME"
                                        : "the script sources no models/<name>.sh; name the "
                                          "model with --model NAME"});
    }
}

void crossCheckModel(const Recipe& r, const std::vector<ScriptFlag>& modelFlags,
                     const ModelCatalog& catalog, std::vector<LaunchNote>& notes) {
    auto shape = resolveModel(r, catalog);
    if (!shape.ok()) {
        return;
    }
    const std::pair<const char*, int> expected[] = {
        {"--num-layers", shape->numLayers},
        {"--hidden-size", shape->hidden},
        {"--ffn-hidden-size", shape->ffnHidden},
        {"--moe-ffn-hidden-size", shape->moeFfnHidden},
        {"--num-experts", shape->numExperts},
        {"--moe-router-topk", shape->topK},
        {"--num-attention-heads", shape->numAttentionHeads},
        {"--num-query-groups", shape->numQueryGroups},
        {"--kv-channels", shape->kvChannels},
        {"--vocab-size", shape->vocabSize},
    };
    for (const auto& f : modelFlags) {
        for (const auto& [flag, want] : expected) {
            if (f.flag != flag || want <= 0 || f.values.size() != 1) {
                continue;
            }
            auto got = parseInt(f.values[0]);
            if (got && *got != want) {
                notes.push_back({NoteLevel::Warning, f.file, f.line, "model",
                                 std::string("MODEL_ARGS ") + flag + " " + f.values[0] +
                                     " but the catalog's " + shape->name + " has " +
                                     std::to_string(want)});
            }
        }
    }
}

// A model the catalog lacks: the shape its MODEL_ARGS give (layers, hidden, FFN, heads, groups,
// experts, top-k, vocab); nullopt without layers, hidden size and heads.
std::optional<ModelShape> shapeFromModelArgs(const std::string& name,
                                             const std::vector<ScriptFlag>& flags) {
    ModelShape shape;
    shape.name = name;
    shape.source = "MODEL_ARGS of the imported script";
    shape.gatedMlp = false;
    shape.tiedEmbeddings = true;
    for (const auto& f : flags) {
        const std::pair<const char*, int*> ints[] = {
            {"--num-layers", &shape.numLayers},
            {"--hidden-size", &shape.hidden},
            {"--ffn-hidden-size", &shape.ffnHidden},
            {"--moe-ffn-hidden-size", &shape.moeFfnHidden},
            {"--num-experts", &shape.numExperts},
            {"--moe-router-topk", &shape.topK},
            {"--num-attention-heads", &shape.numAttentionHeads},
            {"--num-query-groups", &shape.numQueryGroups},
            {"--kv-channels", &shape.kvChannels},
            {"--vocab-size", &shape.vocabSize},
            {"--moe-shared-expert-intermediate-size", &shape.sharedExpertHidden},
        };
        for (const auto& [flag, field] : ints) {
            if (f.flag == flag && f.known && f.values.size() == 1) {
                if (auto v = parseInt(f.values[0]); v && *v > 0 && *v < (1LL << 31)) {
                    *field = static_cast<int>(*v);
                }
            }
        }
        shape.gatedMlp = shape.gatedMlp || f.flag == "--swiglu";
        shape.qkvBias = shape.qkvBias || f.flag == "--add-qkv-bias";
        shape.qkLayernorm = shape.qkLayernorm || f.flag == "--qk-layernorm";
        if (f.flag == "--untie-embeddings-and-output-weights") {
            shape.tiedEmbeddings = false;
        }
    }
    if (shape.numLayers <= 0 || shape.hidden <= 0 || shape.numAttentionHeads <= 0) {
        return std::nullopt;
    }
    return shape;
}

// The rollout's weight dtype from a word of the --hf-checkpoint folder's name, or from slime's
// INT4 QAT flag.
void readCheckpointDtype(Recipe& r, std::vector<LaunchNote>& notes, const std::string& file) {
    std::string dir = r.checkpoints.hfCheckpoint;
    while (!dir.empty() && dir.back() == '/') {
        dir.pop_back();
    }
    std::string name = baseName(dir);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::toupper(c)); });
    // a word of the name: delimited by '-', '_', '.' or an end (Qwen3-30B-A3B-INT4, ...-FP8)
    auto hasWord = [&](std::string_view w) {
        for (std::size_t at = name.find(w); at != std::string::npos; at = name.find(w, at + 1)) {
            auto delim = [](char c) { return c == '-' || c == '_' || c == '.'; };
            const std::size_t end = at + w.size();
            if ((at == 0 || delim(name[at - 1])) && (end == name.size() || delim(name[end]))) {
                return true;
            }
        }
        return false;
    };
    const std::pair<const char*, WeightDtype> words[] = {{"INT4", WeightDtype::Int4},
                                                         {"W4A16", WeightDtype::Int4},
                                                         {"FP8", WeightDtype::Fp8},
                                                         {"NVFP4", WeightDtype::Nvfp4},
                                                         {"MXFP4", WeightDtype::Mxfp4}};
    std::string why;
    for (const auto& [word, dtype] : words) {
        if (hasWord(word)) {
            r.rollout.weightDtype = dtype;
            why = "the --hf-checkpoint directory " + baseName(dir) + " names " + word;
            break;
        }
    }
    if (why.empty()) {
        for (const auto& [k, v] : r.environment.env) {
            if (k == "OPEN_TRAINING_INT4_FAKE_QAT_FLAG" && v == "1") {
                r.rollout.weightDtype = WeightDtype::Int4;
                why = "OPEN_TRAINING_INT4_FAKE_QAT_FLAG=1 (slime's INT4 QAT) is set";
            }
        }
    }
    if (!why.empty()) {
        notes.push_back(
            {NoteLevel::Info, file, 0, "rollout.weight_dtype",
             why + ": the engines' weights are counted as " + toString(r.rollout.weightDtype)});
    }
}

std::optional<int> rayHeadGpus(const ScriptReading& reading) {
    for (const auto& cmd : reading.rayCommands) {
        bool head = false;
        std::optional<int> gpus;
        for (std::size_t i = 2; i < cmd.size(); ++i) {
            const std::string& t = cmd[i].text;
            head = head || t == "--head";
            if (t == "--num-gpus" && i + 1 < cmd.size() && cmd[i + 1].known) {
                auto n = parseInt(cmd[i + 1].text);
                gpus = n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
            } else if (t.rfind("--num-gpus=", 0) == 0 && cmd[i].known) {
                auto n = parseInt(t.substr(11));
                gpus = n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
            }
        }
        if (head && gpus && *gpus > 0) {
            return gpus;
        }
    }
    return std::nullopt;
}

// The script's own Ray words and pre-launch steps (launcher.ray_*, launcher.pre_launch).
void readBringUp(const ScriptReading& reading, Recipe& r, std::vector<LaunchNote>& notes) {
    // words of `ray start --head` an export writes itself (with their values)
    const std::set<std::string> own = {"--head", "--disable-usage-stats"};
    const std::set<std::string> ownWithValue = {"--node-ip-address", "--num-gpus",
                                                "--dashboard-port", "--port"};
    r.launcher.rayStartArgs.clear();
    r.launcher.rayStop = false;
    r.launcher.rayStopArgs.clear();
    // the Ascend runtime's device list, set or required by the script: an NPU run as well
    bool npu = false;
    for (const auto& e : reading.exports) {
        if (!npu && e.name == "ASCEND_RT_VISIBLE_DEVICES") {
            npu = true;
            notes.push_back({NoteLevel::Error, e.file, e.line, "hardware.gpu",
                             "an Ascend NPU run (it exports ASCEND_RT_VISIBLE_DEVICES): runplane "
                             "plans GPU runs (NVIDIA, AMD) only; not imported"});
        }
    }
    for (const auto& p : reading.parameters) {
        if (!npu && p.name == "ASCEND_RT_VISIBLE_DEVICES" && !p.uses.empty()) {
            npu = true;
            notes.push_back({NoteLevel::Error, p.uses.front().first, p.uses.front().second,
                             "hardware.gpu",
                             "an Ascend NPU run (it requires ASCEND_RT_VISIBLE_DEVICES): runplane "
                             "plans GPU runs (NVIDIA, AMD) only; not imported"});
        }
    }
    for (const auto& cmd : reading.rayCommands) {
        // an Ascend NPU cluster (vime's *-npu.sh: `ray start --num-gpus 0 --resources
        // '{"NPU": 16}'`): the planner sizes NVIDIA / AMD GPUs only, so the run is refused with
        // the line rather than read as a run on no GPU (issue 45)
        for (const auto& f : cmd) {
            if (!npu && f.known && f.text.find("\"NPU\"") != std::string::npos) {
                npu = true;
                notes.push_back(
                    {NoteLevel::Error, f.file, f.line, "hardware.gpu",
                     "an Ascend NPU run (ray start declares the resource " + f.text +
                         "): runplane plans GPU runs (NVIDIA, AMD) only; not imported"});
                break;
            }
        }
        const bool stop = cmd[1].text == "stop";
        bool head = stop;
        for (const auto& f : cmd) {
            head = head || f.text == "--head";
        }
        if (!head) {
            continue;  // a worker's ray start: the export writes its own
        }
        std::vector<std::string> words;
        for (std::size_t i = 2; i < cmd.size(); ++i) {
            const Field& f = cmd[i];
            const std::string name = f.text.substr(0, f.text.find('='));
            if (!stop && own.count(f.text)) {
                continue;
            }
            if (!stop && ownWithValue.count(name)) {
                const bool joined = f.text.find('=') != std::string::npos;
                const std::size_t at = joined ? i : i + 1;
                const std::string value = at >= cmd.size() ? std::string()
                                          : joined         ? f.text.substr(f.text.find('=') + 1)
                                                           : cmd[at].text;
                // a port other than Ray's default is the run's (the export uses it for the
                // workers' address and the job submission); the default is written anyway
                const bool port = name == "--port" || name == "--dashboard-port";
                const bool digits = !value.empty() && value.size() <= 5 &&
                                    value.find_first_not_of("0123456789") == std::string::npos;
                if (port && at < cmd.size() && cmd[at].known && digits &&
                    value != (name == "--port" ? "6379" : "8265")) {
                    words.push_back(name + "=" + value);
                }
                if (!joined) {
                    ++i;  // its value
                }
                continue;
            }
            if (!f.known) {
                notes.push_back(
                    {NoteLevel::Warning, f.file, f.line, "launcher.ray_start_args",
                     "ray " + cmd[1].text + " word '" + f.text + "' is not known; not kept"});
                continue;
            }
            words.push_back(f.text);
        }
        if (stop) {
            r.launcher.rayStop = true;
            r.launcher.rayStopArgs = words;
        } else {
            r.launcher.rayStartArgs = words;
        }
    }
    r.launcher.preLaunch.clear();
    for (const auto& step : reading.preLaunch) {
        r.launcher.preLaunch.push_back(step.text);
    }
}

void carrySpliceDefinitions(const ScriptReading& reading, const std::set<std::string>& spliced,
                            Recipe& r, std::vector<LaunchNote>& notes) {
    using Step = ScriptReading::PreLaunchStep;
    std::map<int, const Step*> byLine;  // the script's own lines only, in order
    for (const auto& step : reading.preLaunch) {
        byLine.emplace(step.line, &step);
    }
    bool added = false;
    for (const auto& name : spliced) {
        const auto it = reading.definitions.find(name);
        if (it == reading.definitions.end() || byLine.count(it->second.line) > 0) {
            continue;
        }
        byLine.emplace(it->second.line, &it->second);
        added = true;
        notes.push_back({NoteLevel::Info, it->second.file, it->second.line, "launcher.pre_launch",
                         "the splice ${" + name + "[@]} is defined by lines " +
                             std::to_string(it->second.line) + "-" +
                             std::to_string(it->second.endLine) +
                             "; kept verbatim as a pre-launch step so the export defines it too"});
    }
    if (added && reading.preLaunch.size() + 1 <= byLine.size()) {
        r.launcher.preLaunch.clear();
        for (const auto& [line, step] : byLine) {
            r.launcher.preLaunch.push_back(step->text);
        }
    }
}

}  // namespace runplane::plan::launch::detail
