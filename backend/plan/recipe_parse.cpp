// YAML -> Recipe. Every section is read by a MapReader, so unknown keys, wrong types and
// duplicate keys become diagnostics with line:column, and every field's location is recorded.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/plan/detail/model_shape_yaml.h"
#include "backend/plan/detail/text_checks.h"
#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan {
namespace {

using detail::locOf;
using detail::MapReader;
using detail::ParseContext;

void readModel(MapReader& top, ModelRef& m) {
    const YAML::Node node = top.child("model");
    if (node.IsDefined() && node.IsScalar()) {
        m.name = node.Scalar();  // shorthand: "model: qwen3-4B"
        return;
    }
    MapReader r(top.context(), node, "model");
    r.get("name", m.name);
    r.get("variant", m.variant);
    const YAML::Node shape = r.child("shape");
    if (shape.IsDefined()) {
        MapReader s(top.context(), shape, "model.shape");
        ModelShape parsed;
        detail::readModelShape(s, parsed);
        s.finish();
        m.shape = std::move(parsed);
    }
    r.finish();
}

void readHardware(MapReader& top, Hardware& h) {
    MapReader r(top.context(), top.child("hardware"), "hardware");
    r.get("gpu", h.gpu);
    r.get("gpu_memory_gb", h.gpuMemoryGb);
    r.get("gpus_per_node", h.gpusPerNode);
    r.get("host_ram_gb", h.hostRamGb);
    r.getEnum("cpu_arch", h.cpuArch);
    r.get("nvlink", h.nvlink);
    r.get("assumed", h.assumed);
    r.finish();
}

void readCluster(MapReader& top, Cluster& c) {
    MapReader r(top.context(), top.child("cluster"), "cluster");
    r.get("nodes", c.nodes);
    r.get("master_addr", c.masterAddr);
    r.get("ray_object_store_fraction", c.rayObjectStoreFraction);
    r.get("ray_object_store_max_gb", c.rayObjectStoreMaxGb);
    r.finish();
}

void readTrainer(MapReader& top, Trainer& t) {
    MapReader r(top.context(), top.child("trainer"), "trainer");
    r.getEnum("backend", t.backend);
    r.get("nodes", t.nodes);
    r.get("gpus_per_node", t.gpusPerNode);
    r.get("tp", t.tp);
    r.get("pp", t.pp);
    r.get("cp", t.cp);
    r.get("ep", t.ep);
    r.get("etp", t.etp);
    r.get("sequence_parallel", t.sequenceParallel);
    r.get("decoder_first_pipeline_num_layers", t.decoderFirstPipelineNumLayers);
    r.get("decoder_last_pipeline_num_layers", t.decoderLastPipelineNumLayers);
    r.get("num_layers_per_virtual_stage", t.numLayersPerVirtualStage);
    r.get("recompute", t.recompute);
    r.finish();
}

void readRollout(MapReader& top, Rollout& o) {
    MapReader r(top.context(), top.child("rollout"), "rollout");
    r.getEnum("engine", o.engine);
    r.get("num_gpus", o.numGpus);
    r.get("gpus_per_engine", o.gpusPerEngine);
    r.get("engines", o.engines);
    r.get("pp_size", o.ppSize);
    r.get("dp_size", o.dpSize);
    r.get("ep_size", o.epSize);
    r.get("dp_attention", o.dpAttention);
    r.get("expert_parallel", o.expertParallel);
    {
        MapReader e(top.context(), r.child("eplb"), "rollout.eplb");
        e.get("enabled", o.eplb.enabled);
        e.get("redundant_experts", o.eplb.redundantExperts);
        e.finish();
    }
    r.get("mem_fraction", o.memFraction);
    r.get("cuda_graph", o.cudaGraph);
    r.get("cuda_graph_sizes", o.cudaGraphSizes);
    r.get("cuda_graph_max_bs", o.cudaGraphMaxBs);
    r.getEnum("weight_dtype", o.weightDtype);
    r.getEnum("quant_scope", o.quantScope);
    r.get("max_response_len", o.maxResponseLen);
    r.get("max_context_len", o.maxContextLen);
    r.get("max_prompt_len", o.maxPromptLen);
    r.get("temperature", o.temperature);
    r.get("moe_backend", o.moeBackend);
    r.get("lora_backend", o.loraBackend);
    r.finish();
}

void readBatch(MapReader& top, Batch& b) {
    MapReader r(top.context(), top.child("batch"), "batch");
    r.get("rollout_batch_size", b.rolloutBatchSize);
    r.get("n_samples_per_prompt", b.nSamplesPerPrompt);
    r.get("global_batch_size", b.globalBatchSize);
    r.get("num_steps_per_rollout", b.numStepsPerRollout);
    r.get("micro_batch_size", b.microBatchSize);
    r.get("dynamic_batch_size", b.dynamicBatchSize);
    r.get("max_tokens_per_gpu", b.maxTokensPerGpu);
    r.get("over_sampling_batch_size", b.overSamplingBatchSize);
    r.get("num_rollout", b.numRollout);
    r.get("num_epoch", b.numEpoch);
    r.finish();
}

void readAlgorithm(MapReader& top, Algorithm& a) {
    MapReader r(top.context(), top.child("algorithm"), "algorithm");
    r.getEnum("advantage_estimator", a.advantageEstimator);
    r.get("use_kl_loss", a.useKlLoss);
    r.get("kl_loss_coef", a.klLossCoef);
    r.get("kl_loss_type", a.klLossType);
    r.get("kl_coef", a.klCoef);
    r.get("eps_clip", a.epsClip);
    r.get("eps_clip_high", a.epsClipHigh);
    r.get("entropy_coef", a.entropyCoef);
    r.get("use_tis", a.useTis);
    r.get("lr", a.lr);
    r.get("normalize_advantages", a.normalizeAdvantages);
    r.get("use_rollout_logprobs", a.useRolloutLogprobs);
    r.get("use_opd", a.useOpd);
    r.getEnum("opd_type", a.opdType);
    r.finish();
}

void readOptimizer(MapReader& top, Optimizer& o) {
    MapReader r(top.context(), top.child("optimizer"), "optimizer");
    r.get("kind", o.kind);
    r.get("distributed", o.distributed);
    r.get("cpu_offload", o.cpuOffload);
    r.get("overlap_cpu_optimizer_d2h_h2d", o.overlapCpuOptimizerD2hH2d);
    r.get("precision_aware", o.precisionAware);
    r.get("offload_fraction", o.offloadFraction);
    r.finish();
}

void readLora(MapReader& top, Lora& l) {
    MapReader r(top.context(), top.child("lora"), "lora");
    r.get("rank", l.rank);
    r.get("alpha", l.alpha);
    r.get("dropout", l.dropout);
    r.get("target_modules", l.targetModules);
    r.get("base_cpu_backup", l.baseCpuBackup);
    r.finish();
}

void readMemory(MapReader& top, MemoryFlags& m) {
    MapReader r(top.context(), top.child("memory"), "memory");
    r.get("offload_train", m.offloadTrain);
    r.get("offload_rollout", m.offloadRollout);
    r.getEnum("offload_train_target", m.offloadTrainTarget);
    r.get("drop_checkpoint_page_cache_after_load", m.dropCheckpointPageCacheAfterLoad);
    r.getEnum("colocate_memory_peak_device", m.colocateMemoryPeakDevice);
    r.getEnum("backup_mode", m.backupMode);
    r.get("reload_rollout_weights_from_disk", m.reloadRolloutWeightsFromDisk);
    r.get("disable_weights_backuper", m.disableWeightsBackuper);
    r.get("update_weight_buffer_gb", m.updateWeightBufferGb);
    r.get("process_host_gb", m.processHostGb);
    r.get("process_gpu_gb", m.processGpuGb);
    r.get("allocator_fragmentation", m.allocatorFragmentation);
    r.finish();
}

void readWeightUpdate(MapReader& top, WeightUpdate& w) {
    MapReader r(top.context(), top.child("weight_update"), "weight_update");
    r.getEnum("mode", w.mode);
    r.getEnum("transport", w.transport);
    r.get("disk_dir", w.diskDir);
    r.get("local_checkpoint_dir", w.localCheckpointDir);
    r.get("release_train", w.releaseTrain);
    r.finish();
}

void readEnvironment(MapReader& top, Environment& e) {
    MapReader r(top.context(), top.child("environment"), "environment");
    r.get("nccl_version", e.ncclVersion);
    r.get("nccl_so_path", e.ncclSoPath);
    const YAML::Node env = r.child("env");
    if (env.IsDefined()) {
        MapReader vars(top.context(), env, "environment.env");
        if (vars.isMap()) {
            for (auto it = env.begin(); it != env.end(); ++it) {
                const std::string key = it->first.Scalar();
                if (!detail::isEnvName(key)) {
                    top.context().error("environment.env", locOf(it->first.Mark()),
                                        "environment variable name '" + key +
                                            "' must match [A-Za-z_][A-Za-z0-9_]*");
                    vars.present(key.c_str());  // reported here, not again as an unknown key
                    continue;
                }
                std::string value;
                vars.get(key.c_str(), value);
                e.env.emplace_back(key, value);
            }
        }
        vars.finish();
    }
    r.finish();
}

void readCheckpoints(MapReader& top, Checkpoints& c) {
    MapReader r(top.context(), top.child("checkpoints"), "checkpoints");
    r.get("model_dir", c.modelDir);
    r.get("hf_checkpoint", c.hfCheckpoint);
    r.get("ref_load", c.refLoad);
    r.get("load", c.load);
    r.get("save", c.save);
    r.get("save_interval", c.saveInterval);
    r.get("converted_ep", c.convertedEp);
    r.get("no_save_optim", c.noSaveOptim);
    r.get("no_load_optim", c.noLoadOptim);
    r.get("opd_teacher_load", c.opdTeacherLoad);
    r.finish();
}

void readEval(MapReader& top, Eval& e) {
    MapReader r(top.context(), top.child("eval"), "eval");
    r.get("interval", e.interval);
    const YAML::Node datasets = r.child("datasets");
    if (datasets.IsDefined()) {
        if (!datasets.IsSequence()) {
            top.context().error("eval.datasets", locOf(datasets.Mark()),
                                "'eval.datasets' must be a list of {name, path}");
        } else {
            for (std::size_t i = 0; i < datasets.size(); ++i) {
                const std::string path = "eval.datasets[" + std::to_string(i) + "]";
                MapReader d(top.context(), datasets[i], path);
                EvalDataset dataset;
                d.get("name", dataset.name);
                d.get("path", dataset.path);
                d.finish();
                e.datasets.push_back(std::move(dataset));
            }
        }
    }
    r.get("n_samples_per_eval_prompt", e.nSamplesPerEvalPrompt);
    r.get("max_response_len", e.maxResponseLen);
    r.get("skip_eval_before_train", e.skipEvalBeforeTrain);
    r.finish();
}

void readLauncher(MapReader& top, Launcher& l) {
    MapReader r(top.context(), top.child("launcher"), "launcher");
    r.getEnum("kind", l.kind);
    r.get("script", l.script);
    r.get("entry_point", l.entryPoint);
    r.get("argv", l.argv);
    r.get("workdir", l.workdir);
    r.get("pre_launch", l.preLaunch);
    r.get("ray_start_args", l.rayStartArgs);
    r.get("ray_stop", l.rayStop);
    r.get("ray_stop_args", l.rayStopArgs);
    r.finish();
}

// analysis.metric_kinds: series name (or prefix ending in '*') -> kind, or -> {kind, direction}.
void readAnalysis(MapReader& top, Analysis& a) {
    MapReader r(top.context(), top.child("analysis"), "analysis");
    r.get("primary_metric", a.primaryMetric);
    const YAML::Node kinds = r.child("metric_kinds");
    if (kinds.IsDefined()) {
        const ParseContext& ctx = top.context();
        MapReader entries(ctx, kinds, "analysis.metric_kinds");
        if (entries.isMap()) {
            for (auto it = kinds.begin(); it != kinds.end(); ++it) {
                const std::string key = it->first.Scalar();
                const std::string path = entries.pathOf(key);
                metrics::KindOverride o;
                o.pattern = key;
                if (key.empty() || key == "*") {
                    ctx.error(path, locOf(it->first.Mark()),
                              "'analysis.metric_kinds' keys must name a series or a prefix "
                              "ending in '*' (e.g. eval/arith/time, perf/*)");
                    entries.present(key.c_str());
                    continue;
                }
                if (it->second.IsMap()) {
                    MapReader m(ctx, entries.child(key.c_str()), path);
                    if (!m.present("kind")) {
                        ctx.error(path, locOf(it->second.Mark()),
                                  "'" + path +
                                      "' needs a kind (score, loss, count, time, tokens, "
                                      "bytes, rate, ratio, other)");
                    }
                    m.getEnum("kind", o.kind);
                    m.getEnum("direction", o.direction);
                    m.finish();
                } else if (!it->second.IsScalar()) {
                    ctx.error(path, locOf(it->second.Mark()),
                              "'" + path + "' must be a kind or {kind, direction}");
                    entries.present(key.c_str());
                    continue;
                } else {
                    entries.getEnum(key.c_str(), o.kind);
                }
                a.metricKinds.push_back(std::move(o));
            }
        }
        entries.finish();
    }
    r.get("memory_alarm_gb", a.memoryAlarmGb);
    r.finish();
}

std::vector<std::string> splitWords(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream stream(text);
    std::string word;
    while (stream >> word) {
        words.push_back(word);
    }
    return words;
}

void readExtraArgs(MapReader& top, std::vector<ExtraArg>& out) {
    const YAML::Node list = top.child("extra_args");
    if (!list.IsDefined()) {
        return;
    }
    const ParseContext& ctx = top.context();
    if (!list.IsSequence()) {
        ctx.error("extra_args", locOf(list.Mark()),
                  "'extra_args' must be a list of flags, e.g. [\"--lr 1e-5\"]");
        return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node item = list[i];
        const std::string path = "extra_args[" + std::to_string(i) + "]";
        ExtraArg arg;
        if (item.IsScalar()) {
            auto words = splitWords(item.Scalar());
            if (!words.empty()) {
                arg.flag = words.front();
                arg.values.assign(words.begin() + 1, words.end());
            }
        } else {
            MapReader r(ctx, item, path);
            r.get("flag", arg.flag);
            r.get("values", arg.values);
            r.get("source", arg.source);
            r.finish();
        }
        ctx.sources->set(path, locOf(item.Mark()));
        if (arg.flag.rfind("--", 0) != 0 && !isSpliceWord(arg.flag)) {
            ctx.error(path, locOf(item.Mark()),
                      "'" + path +
                          "' must start with a flag such as --lr (or be a splice such as "
                          "${MODEL_ARGS[@]}), got '" +
                          arg.flag + "'");
            continue;
        }
        out.push_back(std::move(arg));
    }
}

void requireField(const ParseContext& ctx, bool present, const std::string& path, SourceLoc loc,
                  const std::string& what) {
    if (!present) {
        ctx.error(path, loc, "'" + path + "' is required (" + what + ")");
    }
}

}  // namespace

ParseOutcome parseRecipeDetailed(std::string_view text, std::string_view fileName) {
    (void)fileName;
    ParseOutcome outcome;
    Recipe recipe;
    std::optional<YAML::Node> document = detail::loadSingleDocument(text, outcome.diagnostics);
    if (!document.has_value()) {
        return outcome;
    }
    const YAML::Node root = *document;
    ParseContext ctx{&outcome.diagnostics, &recipe.sources};
    if (!root.IsDefined() || root.IsNull()) {
        ctx.error("", SourceLoc{1, 1}, "the recipe is empty (expected 'schema_version: 1')");
        return outcome;
    }
    try {
        MapReader top(ctx, root, "");
        if (!top.isMap()) {
            return outcome;
        }
        const bool hasVersion = top.present("schema_version");
        top.get("schema_version", recipe.schemaVersion);
        if (!hasVersion) {
            ctx.error("schema_version", SourceLoc{1, 1},
                      "'schema_version' is required (this build reads schema_version: 1)");
        } else if (recipe.schemaVersion != kRecipeSchemaVersion) {
            ctx.error("schema_version", recipe.sources.find("schema_version"),
                      "unsupported schema_version " + std::to_string(recipe.schemaVersion) +
                          " (this build reads schema_version: 1)");
        }
        top.get("name", recipe.name);
        top.get("description", recipe.description);
        top.getEnum("framework", recipe.framework);
        readModel(top, recipe.model);
        readHardware(top, recipe.hardware);
        readCluster(top, recipe.cluster);
        top.getEnum("placement", recipe.placement);
        readTrainer(top, recipe.trainer);
        readRollout(top, recipe.rollout);
        readBatch(top, recipe.batch);
        readAlgorithm(top, recipe.algorithm);
        readOptimizer(top, recipe.optimizer);
        readLora(top, recipe.lora);
        readMemory(top, recipe.memory);
        readWeightUpdate(top, recipe.weightUpdate);
        readEnvironment(top, recipe.environment);
        readCheckpoints(top, recipe.checkpoints);
        readEval(top, recipe.eval);
        readLauncher(top, recipe.launcher);
        readAnalysis(top, recipe.analysis);
        readExtraArgs(top, recipe.extraArgs);
        top.finish();
    } catch (const YAML::Exception& e) {
        // yaml-cpp only throws here on malformed trees; report it at its mark.
        ctx.error("", locOf(e.mark), "YAML error: " + e.msg);
    }
    requireField(ctx, !recipe.model.name.empty() || recipe.model.shape.has_value(), "model.name",
                 recipe.sources.find("model"), "a catalog model name or an inline model.shape");
    // Written but out of range (0 included) is a bound error below, not "required".
    requireField(
        ctx,
        recipe.batch.rolloutBatchSize != 0 || recipe.sources.contains("batch.rollout_batch_size"),
        "batch.rollout_batch_size", recipe.sources.find("batch"), "prompts per rollout step");
    for (auto& v : checkRecipeLimits(recipe)) {
        ctx.error(v.path, recipe.sources.find(v.path), std::move(v.message));
    }
    if (outcome.diagnostics.empty()) {
        outcome.recipe = std::move(recipe);
    }
    return outcome;
}

Result<Recipe> parseRecipe(std::string_view text, std::string_view fileName) {
    ParseOutcome outcome = parseRecipeDetailed(text, fileName);
    if (outcome.recipe.has_value()) {
        return std::move(*outcome.recipe);
    }
    std::string message;
    for (const auto& d : outcome.diagnostics) {
        if (!message.empty()) {
            message += '\n';
        }
        message += d.format(fileName);
    }
    return Error{message};
}

Result<std::string> readRecipeText(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        return Error{path + ": is a directory, not a recipe file"};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{path + ": cannot open the recipe file"};
    }
    // Read at most one byte past the limit (the path may be a pipe or /dev/zero).
    std::string text(kMaxRecipeBytes + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(std::size_t(in.gcount()));
    if (in.bad()) {
        return Error{path + ": cannot read the recipe file"};
    }
    if (text.size() > kMaxRecipeBytes) {
        return Error{path + ": the file is over " + std::to_string(kMaxRecipeBytes) +
                     " bytes (256 KiB), the most a recipe may have (a recipe is a few KB)"};
    }
    return text;
}

Result<Recipe> loadRecipe(const std::string& path) {
    Result<std::string> text = readRecipeText(path);
    if (!text.ok()) {
        return Error{text.error()};
    }
    return parseRecipe(*text, path);
}

}  // namespace runplane::plan
