// ScriptReading -> Recipe: the launch command's flags are mapped through the same rule table the
// exporter writes with; unmapped flags are kept verbatim in extra_args with their source line;
// the runplane-meta block (our own exports) restores the fields no flag carries.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_limits.h"
#include "backend/launch/export_plan.h"
#include "backend/launch/flag_rules.h"
#include "backend/launch/import_parts.h"
#include "backend/launch/launch.h"
#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch {

using namespace detail;

namespace {

void setEnv(Recipe& r, const std::string& key, const std::string& value) {
    for (auto& [k, v] : r.environment.env) {
        if (k == key) {
            v = value;
            return;
        }
    }
    r.environment.env.emplace_back(key, value);
}

const std::string* envValue(const Recipe& r, const std::string& key) {
    for (const auto& [k, v] : r.environment.env) {
        if (k == key) {
            return &v;
        }
    }
    return nullptr;
}

}  // namespace

Result<ImportResult> importScriptText(std::string_view text, const std::string& path,
                                      const ImportOptions& options) {
    ScriptReading reading =
        readScript(text, path, options.env, options.sourceRoots, options.expansionBudget);
    ImportResult res;
    res.notes = std::move(reading.notes);
    if (!reading.launch.has_value()) {
        std::string message = path +
                              ": no launch command found (ray job submit ... -- python3 train.py, "
                              "python3 train.py, or python scripts/run_*.py)";
        if (reading.exitAt.second > 0) {
            // e.g. a guard on `$1`: the script is read as run without arguments
            message += "\n  " + reading.exitAt.first + ":" + std::to_string(reading.exitAt.second) +
                       ": the reading stopped at this exit, before any launch command (the "
                       "script is read as run without arguments; --env NAME=VALUE sets what "
                       "its condition reads)";
        }
        for (const auto& n : res.notes) {
            if (n.level != NoteLevel::Info) {
                message += "\n  " + n.format();
            }
        }
        return Error{message};
    }
    auto interpreted = interpret(*reading.launch, reading, res.notes);
    if (!interpreted.ok()) {
        return Error{interpreted.error()};
    }
    const Interpreted& in = *interpreted;
    res.program = in.program;
    res.flags = in.flags;
    for (const auto& p : reading.parameters) {
        ScriptParameter sp;
        sp.name = p.name;
        sp.required = p.required;
        for (const auto& [file, line] : p.uses) {
            sp.usedAt.push_back(file + ":" + std::to_string(line));
        }
        res.parameters.push_back(std::move(sp));
    }
    Recipe& r = res.recipe;
    std::vector<LaunchNote>& notes = res.notes;

    // runplane-meta
    std::optional<Recipe> meta;
    if (!reading.metaLines.empty()) {
        std::string yaml;
        for (const auto& l : reading.metaLines) {
            yaml += l + "\n";
        }
        auto parsed = parseRecipe(yaml, path + " (runplane-meta)");
        if (parsed.ok()) {
            meta = std::move(*parsed);
        } else {
            notes.push_back(
                {NoteLevel::Warning, path, 0, "",
                 "the runplane-meta block does not read and is ignored: " + parsed.error()});
        }
    }
    res.hadMeta = meta.has_value();

    // which launcher wrote this
    auto trainLevel = [&](const ScriptFlag& f) {
        return !f.fromModelFile && (in.milesScript ? f.inExtraArgs : true);
    };
    bool anyVllm = false;
    bool anySglang = false;
    for (const auto& f : in.flags) {
        if (trainLevel(f)) {
            anyVllm = anyVllm || f.flag.rfind("--vllm-", 0) == 0;
            anySglang = anySglang || f.flag.rfind("--sglang-", 0) == 0;
        }
    }
    const FrameworkReading detected = readFramework(in, reading, path);
    Flavour flavour = detected.flavour;
    bool assumed = detected.assumed;
    const auto marked = flavourFromName(reading.flavourMark);
    if (marked) {
        flavour = *marked;
        assumed = false;
    }
    if (!meta && !marked && !options.framework && !detected.why.empty()) {
        notes.push_back({NoteLevel::Info, path, 0, "framework", detected.why});
    }
    const unsigned bits = flavourBit(flavour) | (in.milesScript ? kScriptBit : 0U);
    if (meta) {
        for (const auto& slot : fieldSlots()) {
            if (isReconciledField(slot.path.view()) || !fieldHasFlag(slot.path.view(), bits)) {
                slot.copy(*meta, r);
            }
        }
    } else {
        r.framework = flavour == Flavour::Miles
                          ? Framework::Miles
                          : (flavour == Flavour::Vime ? Framework::Vime : Framework::Slime);
        r.frameworkAssumed = assumed;
    }
    if (options.framework) {
        r.framework = *options.framework;
        r.frameworkAssumed = false;
    }

    // recompute: the three flags together
    std::vector<bool> consumed(in.flags.size(), false);
    {
        const std::pair<const char*, const char*> triple[] = {{"--recompute-granularity", "full"},
                                                              {"--recompute-method", "uniform"},
                                                              {"--recompute-num-layers", "1"}};
        std::vector<std::size_t> hits;
        for (const auto& [flag, value] : triple) {
            int count = 0;
            std::size_t at = 0;
            for (std::size_t i = 0; i < in.flags.size(); ++i) {
                const auto& f = in.flags[i];
                if (trainLevel(f) && f.flag == flag) {
                    ++count;
                    at = i;
                }
            }
            if (count != 1) {
                continue;  // in.flags[at] does not exist when the command has no flags at all
            }
            const auto& f = in.flags[at];
            if (f.known && f.values == std::vector<std::string>{value}) {
                hits.push_back(at);
            }
        }
        if (hits.size() == 3) {
            for (auto i : hits) {
                consumed[i] = true;
            }
            r.trainer.recompute = true;
        }
    }

    std::vector<std::pair<std::size_t, ExtraArg>> verbatim;  // (flag index, extra) in flag order
    auto keepVerbatim = [&](std::size_t index) {
        const ScriptFlag& f = in.flags[index];
        ExtraArg extra;
        const auto ann = reading.annotations.find({f.file, f.line});
        if (ann != reading.annotations.end() && ann->second.rfind(kSourceMark, 0) == 0) {
            const auto j = nlohmann::json::parse(
                ann->second.substr(std::string(kSourceMark).size()), nullptr, false);
            extra.source =
                j.is_string() ? j.get<std::string>() : f.file + ":" + std::to_string(f.line);
        } else {
            extra.source = f.file + ":" + std::to_string(f.line);
        }
        if (f.splice) {
            extra.flag = f.values.empty() ? "" : f.values[0];
        } else if (in.milesScript && f.inExtraArgs) {
            extra.flag = "--extra-args";
            extra.values = {flagText(f)};
        } else {
            extra.flag = f.flag;
            extra.values = f.values;
        }
        verbatim.emplace_back(index, std::move(extra));
    };

    // every flag through the rule table
    std::set<std::string> touched;
    std::map<std::string, std::pair<int, std::vector<std::string>>> firstSeen;
    std::vector<ScriptFlag> modelFlags;
    std::optional<std::size_t> loraSwitch;
    std::set<std::string> splicedNames;
    std::vector<std::pair<std::size_t, const FlagRule*>> mapped;
    for (std::size_t i = 0; i < in.flags.size(); ++i) {
        const ScriptFlag& f = in.flags[i];
        if (consumed[i]) {
            continue;
        }
        if (f.fromModelFile) {
            modelFlags.push_back(f);
            continue;
        }
        if (f.splice && reading.pythonModelArgArrays.count(spliceName(f.values[0])) > 0) {
            const bool carried = reading.definitions.count(spliceName(f.values[0])) > 0;
            notes.push_back({NoteLevel::Info, f.file, f.line, "model",
                             f.values[0] +
                                 " holds the model arguments miles computes from the model's "
                                 "name; the model is taken from that name and an export " +
                                 (carried ? std::string("computes them the same way (the two "
                                                        "lines are a pre-launch step)")
                                          : std::string("sources its models/<name>.sh"))});
            if (carried) {
                splicedNames.insert(spliceName(f.values[0]));
            }
            continue;
        }
        if (f.splice) {
            if (isSpliceWord(f.values[0])) {
                notes.push_back({NoteLevel::Info, f.file, f.line, "extra_args",
                                 f.values[0] +
                                     " is not resolved here; kept in place as a splice of its "
                                     "own (its neighbours keep their values)"});
                keepVerbatim(i);
                splicedNames.insert(spliceName(f.values[0]));
            } else {
                notes.push_back({NoteLevel::Warning, f.file, f.line, "extra_args",
                                 "'" + f.values[0] +
                                     "' of the launch command is not resolved and is not a plain "
                                     "${NAME[@]} / $NAME expansion; dropped (its neighbours are "
                                     "read as written)"});
            }
            continue;
        }
        if (f.flag.empty()) {
            notes.push_back({NoteLevel::Warning, f.file, f.line, "",
                             "positional argument '" + flagText(f) +
                                 "' of the launch command is not understood; dropped"});
            continue;
        }
        const FlagRule* rule =
            in.milesScript && !f.inExtraArgs ? findScriptOption(f.flag) : findRule(f.flag);
        if (in.milesScript && !f.inExtraArgs && f.flag == "--lora") {
            loraSwitch = i;
            continue;
        }
        if (rule != nullptr && rule->apply != nullptr && f.known) {
            std::string why;
            if (applyFlag(*rule, f.flag, r, f.values, why)) {
                const auto first = firstSeen.find(rule->field.str());
                if (first != firstSeen.end() && first->second.second != f.values &&
                    rule->field != fields::kMemoryOffloadTrain) {
                    notes.push_back({NoteLevel::Warning, f.file, f.line, rule->field.str(),
                                     f.flag + " sets " + rule->field.str() +
                                         " again (first on line " +
                                         std::to_string(first->second.first) +
                                         "); the last one wins, as in the framework"});
                }
                firstSeen.emplace(rule->field.str(), std::make_pair(f.line, f.values));
                touched.insert(rule->field.str());
                const auto ann = reading.annotations.find({f.file, f.line});
                if (ann != reading.annotations.end() && ann->second.rfind(kSourceMark, 0) == 0) {
                    keepVerbatim(i);  // a recipe extra_args entry of our own export: stays one
                } else {
                    mapped.push_back({i, rule});
                }
                continue;
            }
            notes.push_back({NoteLevel::Warning, f.file, f.line, rule->field.str(),
                             f.flag + " " + why + "; kept verbatim in extra_args"});
        } else if (!f.known) {
            notes.push_back({NoteLevel::Warning, f.file, f.line, "",
                             f.flag + ": a value depends on something not understood; kept "
                                      "verbatim in extra_args"});
        }
        if (rule == nullptr || rule->apply == nullptr) {
            notes.push_back({NoteLevel::Info, f.file, f.line, "extra_args",
                             flagText(f) + ": no recipe field; kept verbatim in extra_args"});
        }
        keepVerbatim(i);
    }
    // environment
    auto takeExport = [&](const ExportRecord& rec) {
        if (rec.derived || !rec.pinned) {
            return;
        }
        if (!rec.known) {
            notes.push_back({NoteLevel::Warning, rec.file, rec.line, "environment.env",
                             "export " + rec.name + ": the value is not known; not recorded"});
            return;
        }
        if (!meta && rec.name == "MASTER_ADDR") {
            r.cluster.masterAddr = rec.value;
            return;
        }
        setEnv(r, rec.name, rec.value);
    };
    for (const auto& rec : reading.exports) {
        takeExport(rec);
    }
    for (const auto& rec : reading.launch->prefixEnv) {
        takeExport(rec);
    }
    if (in.runtimeEnvJson) {
        const Field& f = *in.runtimeEnvJson;
        nlohmann::json doc =
            f.known ? nlohmann::json::parse(f.text, nullptr, false) : nlohmann::json();
        if (!f.known) {
            notes.push_back({NoteLevel::Info, f.file, f.line, "environment.env",
                             "--runtime-env-json not read: " + f.why});
        } else if (!doc.is_object()) {
            notes.push_back({NoteLevel::Warning, f.file, f.line, "environment.env",
                             "--runtime-env-json is not a JSON object; not read"});
        } else if (doc.contains("env_vars") && doc["env_vars"].is_object()) {
            for (const auto& [key, jv] : doc["env_vars"].items()) {
                const std::string value = jv.is_string() ? jv.get<std::string>() : jv.dump();
                if (const std::string* have = envValue(r, key)) {
                    if (*have != value) {
                        notes.push_back({NoteLevel::Info, f.file, f.line, "environment.env",
                                         "--runtime-env-json sets " + key + "=" + value +
                                             " but the script exports " + *have +
                                             "; the export is kept"});
                    }
                    continue;
                }
                const auto sv = reading.scalars.find(key);
                if (sv != reading.scalars.end() && sv->second == value) {
                    continue;  // a reference to the shell variable of that name
                }
                if ((key == "PYTHONPATH" && value == "/root/Megatron-LM/") ||
                    (key == "CUDA_DEVICE_MAX_CONNECTIONS" && value == "1")) {
                    continue;  // the exporter writes these itself
                }
                if (key == "NCCL_NVLS_ENABLE" && (value == "0" || value == "1")) {
                    if (!meta) {
                        r.hardware.nvlink = value == "1";
                    }
                    continue;
                }
                notes.push_back({NoteLevel::Info, f.file, f.line, "environment.env",
                                 key + " taken from --runtime-env-json"});
                setEnv(r, key, value);
            }
        }
    }

    // fields the flags carry only in part
    std::optional<RolloutEngine> flagEngine;
    if (anyVllm != anySglang) {
        flagEngine = anyVllm ? RolloutEngine::Vllm : RolloutEngine::Sglang;
    } else if (anyVllm) {
        notes.push_back({NoteLevel::Warning, path, 0, "rollout.engine",
                         "the launch command has both --sglang-* and --vllm-* flags"});
    }
    if (flagEngine && *flagEngine != effectiveEngine(r)) {
        if (meta) {
            notes.push_back({NoteLevel::Info, path, 0, "rollout.engine",
                             std::string("the flags are ") + toString(*flagEngine) +
                                 " flags; rollout.engine follows them"});
        }
        r.rollout.engine = flagEngine;
    }
    if (!meta) {
        // no flag names the GPU or the host: H100 / 80 GB / host RAM are stand-ins
        r.hardware.assumed = true;
        if (!touched.count("rollout.weight_dtype")) {
            readCheckpointDtype(r, notes, path);
        }
    }
    if (!meta && !touched.count("hardware.gpus_per_node")) {
        // the head's `ray start --num-gpus N` says what a node has; else the trainer's share
        const std::optional<int> headGpus = rayHeadGpus(reading);
        r.hardware.gpusPerNode = headGpus.value_or(r.trainer.gpusPerNode.value_or(8));
    }
    if (touched.count("trainer.gpus_per_node")) {
        const int observed = *r.trainer.gpusPerNode;
        const std::optional<int> raw = meta ? meta->trainer.gpusPerNode : std::nullopt;
        if (observed == raw.value_or(r.hardware.gpusPerNode)) {
            r.trainer.gpusPerNode = raw;
        } else if (meta) {
            notes.push_back({NoteLevel::Info, path, 0, "trainer.gpus_per_node",
                             "--actor-num-gpus-per-node differs from the runplane-meta block; "
                             "the flag wins"});
        }
    }
    if (!meta && !in.milesScript) {
        // The script's counts are not bounded yet (validate checks them against recipe_limits.h),
        // so the sum is taken in 64 bits and the node count clamped into int: validate then
        // names the field that is out of range (int overflowed here, found by fuzz_import).
        const std::int64_t actorGpus =
            std::int64_t{r.trainer.nodes.value_or(1)} * trainerGpusPerNode(r);
        const std::int64_t rollout =
            r.placement == Placement::Disaggregated ? r.rollout.numGpus.value_or(0) : 0;
        const std::int64_t gpn = std::max(1, r.hardware.gpusPerNode);
        const std::int64_t nodes = std::max<std::int64_t>(r.trainer.nodes.value_or(1),
                                                          (actorGpus + rollout + gpn - 1) / gpn);
        r.cluster.nodes = static_cast<int>(std::clamp<std::int64_t>(
            nodes, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
    }
    if (touched.count("trainer.nodes")) {
        const int observed = *r.trainer.nodes;
        const std::optional<int> raw = meta ? meta->trainer.nodes : std::nullopt;
        if (observed == raw.value_or(r.cluster.nodes)) {
            r.trainer.nodes = raw;
        } else if (meta) {
            notes.push_back({NoteLevel::Info, path, 0, "trainer.nodes",
                             "--actor-num-nodes differs from the runplane-meta block; the flag "
                             "wins"});
        }
    } else if (!meta && !in.milesScript && r.cluster.nodes != 1) {
        r.trainer.nodes = 1;  // the frameworks' default
    }
    if (!meta) {
        for (const char* key : {"SGLANG_NCCL_SO_PATH", "VLLM_NCCL_SO_PATH"}) {
            if (const std::string* v = envValue(r, key)) {
                r.environment.ncclSoPath = *v;
            }
        }
        if (in.milesScript) {
            r.launcher.script = in.program;
            if (r.framework != Framework::Miles) {
                r.launcher.kind = LauncherKind::MilesScript;
            }
        } else if (r.framework == Framework::Miles) {
            r.launcher.kind = LauncherKind::SlimeBash;
        }
    } else if (in.milesScript && r.launcher.script != in.program) {
        notes.push_back({NoteLevel::Info, path, 0, "launcher.script",
                         "the launcher is " + in.program + "; launcher.script follows it"});
        r.launcher.script = in.program;
    }

    if (!in.milesScript) {
        // train.py / train_async.py by name (the framework's folder is the job's); an entry
        // point of the script's own (an example's `examples/x/topkopd_train.py`) keeps its path
        const std::string entry = baseName(in.program);
        r.launcher.entryPoint =
            entry == "train.py" || entry == "train_async.py" ? entry : in.program;
    }

    readBringUp(reading, r, notes);
    r.launcher.raySubmitArgs.clear();
    for (const Field& f : in.submitArgs) {
        if (!f.known) {
            notes.push_back({NoteLevel::Warning, f.file, f.line, "launcher.ray_submit_args",
                             "ray job submit word '" + f.text + "' is not known; not kept"});
            continue;
        }
        r.launcher.raySubmitArgs.push_back(f.text);
    }
    carrySpliceDefinitions(reading, splicedNames, r, notes);

    // A mapped flag the exporter would not write back at the recipe default goes to its field
    // only and is named in launcher.explicit_flags, so that export repeats it with the field's
    // value (an edit wins). One the export cannot write at all (an engine flag of another
    // framework) is also kept verbatim, so that export repeats it.
    for (const auto& [index, rule] : mapped) {
        const ScriptFlag& f = in.flags[index];
        const bool scriptLevel = in.milesScript && !f.inExtraArgs;
        bool always = in.milesScript ? alwaysInExtraArgs(rule->field.str()) : rule->alwaysInBash;
        if (scriptLevel) {
            for (const auto& opt : scriptOptions()) {
                if (f.flag == opt.option) {
                    always = opt.always;
                }
            }
        }
        std::vector<FlagValues> out;
        const bool available = (rule->flavours & bits) != 0 && rule->emit != nullptr;
        if (available) {
            emitFor(*rule, r, in.milesScript && !scriptLevel, always, out);
        }
        const std::string& ruleFlag = rule->flag;
        const bool emitted = std::any_of(out.begin(), out.end(),
                                         [&](const FlagValues& fv) { return fv.flag == ruleFlag; });
        if (!emitted && available) {
            std::vector<FlagValues> forced;
            emitFor(*rule, r, in.milesScript && !scriptLevel, true, forced);
            if (std::any_of(forced.begin(), forced.end(),
                            [&](const FlagValues& fv) { return fv.flag == ruleFlag; })) {
                auto& explicitFlags = r.launcher.explicitFlags;
                if (std::find(explicitFlags.begin(), explicitFlags.end(), ruleFlag) ==
                    explicitFlags.end()) {
                    explicitFlags.push_back(ruleFlag);
                }
                continue;
            }
        }
        if (!emitted && rule->emit != nullptr) {
            notes.push_back({NoteLevel::Info, f.file, f.line, rule->field.str(),
                             f.flag + " is read into " + rule->field.str() +
                                 " and also kept verbatim, because the export would not write it "
                                 "back (recipe default or another framework's flag)"});
            keepVerbatim(index);
        }
    }
    if (loraSwitch) {
        const ScriptFlag& f = in.flags[*loraSwitch];
        if (r.lora.rank == 0) {
            notes.push_back({NoteLevel::Warning, f.file, f.line, "lora.rank",
                             "--lora without --lora-rank: the rank is the launcher's default, "
                             "unknown here; kept verbatim in extra_args"});
            keepVerbatim(*loraSwitch);
        }
    }
    std::stable_sort(verbatim.begin(), verbatim.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [index, extra] : verbatim) {
        r.extraArgs.push_back(std::move(extra));
    }

    // the model
    const std::string lastStem = reading.modelStems.empty() ? "" : reading.modelStems.back();
    if (!options.modelName.empty()) {
        r.model.name = options.modelName;
        r.model.shape.reset();
    } else if (!meta) {
        if (!lastStem.empty()) {
            auto [name, variant] = resolveStem(lastStem, options.catalog, notes, path);
            r.model.name = name;
            r.model.variant = variant;
            // a name written another way than the catalog's with no MODEL_ARGS to read a shape
            // from (miles' `model_args_utils.py gpt-oss-20b`, `qwen3-4B-Instruct-2507`, a
            // `-npu` model file): the catalog model of that name, case and suffixes aside
            // (issue 45). A sourced model file keeps its name: its export sources that file.
            std::string base = name;
            for (const char* npu : {"-npu", "_npu", "-NPU", "_NPU"}) {
                if (base.size() > 4 && base.ends_with(npu)) {
                    base.resize(base.size() - 4);
                }
            }
            if (options.catalog != nullptr && variant.empty() && modelFlags.empty() &&
                options.catalog->find(name) == nullptr &&
                options.catalog->findUnsized(name) == nullptr) {
                if (const std::string known = catalogModelNamed(base, options.catalog);
                    !known.empty()) {
                    r.model.name = known;
                    notes.push_back({NoteLevel::Info, path, 0, "model.name",
                                     "model '" + name + "' is the catalog's '" + known + "'"});
                }
            }
        } else {
            modelWithoutModelFile(in, options.catalog, path, r, notes);
        }
    } else if (!in.milesScript && !lastStem.empty() &&
               lastStem != modelFileStem(r, options.catalog)) {
        notes.push_back({NoteLevel::Warning, path, 0, "model",
                         "the script sources models/" + lastStem +
                             ".sh, not the runplane-meta model; the file wins"});
        auto [name, variant] = resolveStem(lastStem, options.catalog, notes, path);
        r.model = ModelRef{};
        r.model.name = name;
        r.model.variant = variant;
    }
    if (!meta && options.modelName.empty() && options.catalog != nullptr && !r.model.name.empty() &&
        r.model.variant.empty() && options.catalog->find(r.model.name) == nullptr &&
        !modelFlags.empty()) {
        if (auto shape = shapeFromModelArgs(r.model.name, modelFlags)) {
            r.model.shape = std::move(*shape);
            const UnsizedModel* unsized = options.catalog->findUnsized(r.model.name);
            notes.push_back(
                {NoteLevel::Info, path, 0, "model.shape",
                 "model '" + r.model.name +
                     (unsized != nullptr
                          ? "' cannot be sized by the catalog (" + unsized->why +
                                "): its shape is taken from the sourced MODEL_ARGS as an inline "
                                "model.shape, every layer counted as attention + MLP"
                          : std::string("' is not in the catalog: its shape is taken from the "
                                        "sourced MODEL_ARGS as an inline model.shape"))});
        }
    } else if (options.catalog != nullptr && !modelFlags.empty()) {
        crossCheckModel(r, modelFlags, *options.catalog, notes);
    } else if (!meta && options.modelName.empty() && options.catalog != nullptr &&
               modelFlags.empty() && !r.model.name.empty() && r.model.variant.empty() &&
               options.catalog->find(r.model.name) == nullptr &&
               options.catalog->findUnsized(r.model.name) == nullptr) {
        // the model's arguments written in the script itself (`MODEL_ARGS=( --num-layers ...)`
        // with no model file, issue 45): the shape is read from them as from a model file's;
        // the flags stay in extra_args, so an export writes them back without a model file
        std::vector<ScriptFlag> inlineFlags;
        for (const auto& f : in.flags) {
            if (!f.fromModelFile && !f.inExtraArgs && !f.splice) {
                inlineFlags.push_back(f);
            }
        }
        if (auto shape = shapeFromModelArgs(r.model.name, inlineFlags)) {
            r.model.shape = std::move(*shape);
            notes.push_back({NoteLevel::Info, path, 0, "model.shape",
                             "model '" + r.model.name +
                                 "' is not in the catalog and no model file is sourced: its "
                                 "shape is taken from the model arguments the script writes "
                                 "itself (an inline model.shape)"});
        }
    }
    const MilesLauncherFacts* facts = in.milesScript ? milesLauncherFacts(in.program) : nullptr;
    if (!meta && facts != nullptr) {
        readLauncherDefaults(*facts, touched, path, reading.launch->line, r, notes);
    } else if (in.milesScript && isInklingLauncher(in.program)) {
        // with a runplane-meta block too: our export leaves to the launcher what it decides itself
        readInklingLauncher(in.flags, touched, path, reading.launch->line, r, notes);
    } else if (!meta && !touched.count("rollout.mem_fraction")) {
        notes.push_back({NoteLevel::Info, path, reading.launch->line, "rollout.mem_fraction",
                         "no engine memory fraction in the script: the engine's own default "
                         "applied there; the recipe assumes 0.8 and an export writes it"});
    }
    if (r.batch.rolloutBatchSize == 0) {
        // `--rollout-batch-size ${ROLLOUT_BATCH_SIZE}` with `ROLLOUT_BATCH_SIZE=$((8 * NUM_GPUS))`
        // carried as a pre-launch step (vime's run-qwen2.5-3B-ai21-async.sh, issue 45): a value
        // only the node knows. The splice stays in extra_args, which the export writes after the
        // field's flag, so the framework receives the value computed on the node as the
        // original's; the field holds 1, a stand-in the recipe requires, and says so.
        for (const auto& e : r.extraArgs) {
            if (e.flag != "--rollout-batch-size" || e.values.size() != 1 ||
                e.values[0].size() < 4 || e.values[0].rfind("${", 0) != 0 ||
                e.values[0].back() != '}') {
                continue;
            }
            const std::string name = e.values[0].substr(2, e.values[0].size() - 3);
            std::string step;
            for (const auto& stepText : r.launcher.preLaunch) {
                const std::size_t at = stepText.find(name + "=");
                if (at != std::string::npos && (at == 0 || stepText[at - 1] == '\n')) {
                    const std::size_t end = stepText.find('\n', at);
                    step = stepText.substr(at,
                                           end == std::string::npos ? std::string::npos : end - at);
                }
            }
            if (step.empty()) {
                continue;
            }
            r.batch.rolloutBatchSize = 1;
            notes.push_back(
                {NoteLevel::Warning, path, reading.launch->line, "batch.rollout_batch_size",
                 "--rollout-batch-size " + e.values[0] + " is computed when the script runs (`" +
                     step +
                     "`, a pre-launch step): its value depends on the machine (the GPU count "
                     "the node reports). Kept as " +
                     e.values[0] +
                     " in extra_args, which the export writes after the field's flag, so the "
                     "framework receives the value computed on the node; batch.rollout_batch_size "
                     "holds 1 only as the stand-in the recipe requires, and validate's batch "
                     "checks do not see the real value (give the GPU count with --env to "
                     "read it as a number)"});
            break;
        }
    }
    if (r.batch.rolloutBatchSize == 0) {
        notes.push_back({NoteLevel::Error, path, reading.launch->line, "batch.rollout_batch_size",
                         "no --rollout-batch-size: the recipe requires batch.rollout_batch_size"});
    }
    return res;
}

Result<ImportResult> importScript(const std::string& path, const ImportOptions& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{path + ": cannot read the script"};
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > detail::kMaxScriptBytes) {
        return Error{path + ": larger than " + std::to_string(detail::kMaxScriptBytes >> 20) +
                     " MiB; not a launch script"};
    }
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    if (text.size() > detail::kMaxScriptBytes) {
        return Error{path + ": larger than " + std::to_string(detail::kMaxScriptBytes >> 20) +
                     " MiB; not a launch script"};
    }
    if (text.find('\0') != std::string::npos) {
        return Error{path + ": not a text file"};
    }
    return importScriptText(text, path, options);
}

}  // namespace runplane::plan::launch
