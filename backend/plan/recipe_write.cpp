// Recipe -> YAML: schema order, only fields that differ from their default, so a written recipe
// reads like a hand-written one and parse(write(r)) == r.

#include "backend/plan/detail/model_shape_yaml.h"
#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe.h"

namespace runplane::plan {
namespace {

using detail::SectionWriter;

void writeModel(SectionWriter& top, const ModelRef& m) {
    SectionWriter w(top.emitter(), "model", &top);
    w.field("name", m.name);
    w.field("variant", m.variant);
    if (m.shape.has_value()) {
        SectionWriter s(top.emitter(), "shape", &w);
        detail::writeModelShape(s, *m.shape);
        s.open();
    }
}

void writeSections(SectionWriter& top, const Recipe& r) {
    const Recipe d;
    {
        SectionWriter w(top.emitter(), "hardware", &top);
        w.field("gpu", r.hardware.gpu, d.hardware.gpu);
        w.field("gpu_memory_gb", r.hardware.gpuMemoryGb, d.hardware.gpuMemoryGb);
        w.field("gpus_per_node", r.hardware.gpusPerNode, d.hardware.gpusPerNode);
        w.field("host_ram_gb", r.hardware.hostRamGb, d.hardware.hostRamGb);
        w.enumField("cpu_arch", r.hardware.cpuArch, d.hardware.cpuArch);
        w.field("nvlink", r.hardware.nvlink, d.hardware.nvlink);
        w.field("assumed", r.hardware.assumed, d.hardware.assumed);
    }
    {
        SectionWriter w(top.emitter(), "cluster", &top);
        w.field("nodes", r.cluster.nodes, d.cluster.nodes);
        w.field("master_addr", r.cluster.masterAddr, d.cluster.masterAddr);
        w.field("ray_object_store_fraction", r.cluster.rayObjectStoreFraction,
                d.cluster.rayObjectStoreFraction);
        w.field("ray_object_store_max_gb", r.cluster.rayObjectStoreMaxGb,
                d.cluster.rayObjectStoreMaxGb);
    }
    top.enumField("placement", r.placement, d.placement);
    {
        const Trainer& t = r.trainer;
        SectionWriter w(top.emitter(), "trainer", &top);
        w.enumField("backend", t.backend, d.trainer.backend);
        w.field("nodes", t.nodes);
        w.field("gpus_per_node", t.gpusPerNode);
        w.field("tp", t.tp, d.trainer.tp);
        w.field("pp", t.pp, d.trainer.pp);
        w.field("cp", t.cp, d.trainer.cp);
        w.field("ep", t.ep, d.trainer.ep);
        w.field("etp", t.etp);
        w.field("sequence_parallel", t.sequenceParallel, d.trainer.sequenceParallel);
        w.field("decoder_first_pipeline_num_layers", t.decoderFirstPipelineNumLayers);
        w.field("decoder_last_pipeline_num_layers", t.decoderLastPipelineNumLayers);
        w.field("num_layers_per_virtual_stage", t.numLayersPerVirtualStage);
        w.field("recompute", t.recompute, d.trainer.recompute);
    }
    {
        const Rollout& o = r.rollout;
        const Rollout& od = d.rollout;
        SectionWriter w(top.emitter(), "rollout", &top);
        w.enumField("engine", o.engine);
        w.field("num_gpus", o.numGpus);
        w.field("gpus_per_engine", o.gpusPerEngine, od.gpusPerEngine);
        w.field("engines", o.engines);
        w.field("pp_size", o.ppSize, od.ppSize);
        w.field("dp_size", o.dpSize, od.dpSize);
        w.field("ep_size", o.epSize, od.epSize);
        w.field("dp_attention", o.dpAttention, od.dpAttention);
        w.field("expert_parallel", o.expertParallel, od.expertParallel);
        {
            SectionWriter e(top.emitter(), "eplb", &w);
            e.field("enabled", o.eplb.enabled, od.eplb.enabled);
            e.field("redundant_experts", o.eplb.redundantExperts, od.eplb.redundantExperts);
        }
        w.field("mem_fraction", o.memFraction, od.memFraction);
        w.field("cuda_graph", o.cudaGraph, od.cudaGraph);
        w.field("cuda_graph_sizes", o.cudaGraphSizes);
        w.field("cuda_graph_max_bs", o.cudaGraphMaxBs, od.cudaGraphMaxBs);
        w.enumField("weight_dtype", o.weightDtype, od.weightDtype);
        w.enumField("quant_scope", o.quantScope, od.quantScope);
        w.field("max_response_len", o.maxResponseLen);
        w.field("max_context_len", o.maxContextLen);
        w.field("max_prompt_len", o.maxPromptLen);
        w.field("temperature", o.temperature, od.temperature);
        w.field("moe_backend", o.moeBackend);
        w.field("lora_backend", o.loraBackend);
    }
    {
        const Batch& b = r.batch;
        const Batch& bd = d.batch;
        SectionWriter w(top.emitter(), "batch", &top);
        w.field("rollout_batch_size", b.rolloutBatchSize, bd.rolloutBatchSize);
        w.field("n_samples_per_prompt", b.nSamplesPerPrompt, bd.nSamplesPerPrompt);
        w.field("global_batch_size", b.globalBatchSize);
        w.field("num_steps_per_rollout", b.numStepsPerRollout);
        w.field("micro_batch_size", b.microBatchSize, bd.microBatchSize);
        w.field("dynamic_batch_size", b.dynamicBatchSize, bd.dynamicBatchSize);
        w.field("max_tokens_per_gpu", b.maxTokensPerGpu);
        w.field("over_sampling_batch_size", b.overSamplingBatchSize);
        w.field("num_rollout", b.numRollout);
        w.field("num_epoch", b.numEpoch);
    }
    {
        const Algorithm& a = r.algorithm;
        const Algorithm& ad = d.algorithm;
        SectionWriter w(top.emitter(), "algorithm", &top);
        w.enumField("advantage_estimator", a.advantageEstimator, ad.advantageEstimator);
        w.field("use_kl_loss", a.useKlLoss, ad.useKlLoss);
        w.field("kl_loss_coef", a.klLossCoef, ad.klLossCoef);
        w.field("kl_loss_type", a.klLossType, ad.klLossType);
        w.field("kl_coef", a.klCoef, ad.klCoef);
        w.field("eps_clip", a.epsClip, ad.epsClip);
        w.field("eps_clip_high", a.epsClipHigh);
        w.field("entropy_coef", a.entropyCoef, ad.entropyCoef);
        w.field("use_tis", a.useTis, ad.useTis);
        w.field("lr", a.lr, ad.lr);
        w.field("normalize_advantages", a.normalizeAdvantages, ad.normalizeAdvantages);
        w.field("use_rollout_logprobs", a.useRolloutLogprobs, ad.useRolloutLogprobs);
        w.field("use_opd", a.useOpd, ad.useOpd);
        w.enumField("opd_type", a.opdType);
    }
    {
        const Optimizer& o = r.optimizer;
        const Optimizer& od = d.optimizer;
        SectionWriter w(top.emitter(), "optimizer", &top);
        w.field("kind", o.kind, od.kind);
        w.field("distributed", o.distributed, od.distributed);
        w.field("cpu_offload", o.cpuOffload, od.cpuOffload);
        w.field("overlap_cpu_optimizer_d2h_h2d", o.overlapCpuOptimizerD2hH2d,
                od.overlapCpuOptimizerD2hH2d);
        w.field("precision_aware", o.precisionAware, od.precisionAware);
        w.field("offload_fraction", o.offloadFraction, od.offloadFraction);
    }
    {
        const Lora& l = r.lora;
        const Lora& ld = d.lora;
        SectionWriter w(top.emitter(), "lora", &top);
        w.field("rank", l.rank, ld.rank);
        w.field("alpha", l.alpha, ld.alpha);
        w.field("dropout", l.dropout, ld.dropout);
        w.field("target_modules", l.targetModules);
        w.field("base_cpu_backup", l.baseCpuBackup, ld.baseCpuBackup);
    }
    {
        const MemoryFlags& m = r.memory;
        const MemoryFlags& md = d.memory;
        SectionWriter w(top.emitter(), "memory", &top);
        w.field("offload_train", m.offloadTrain);
        w.field("offload_rollout", m.offloadRollout);
        w.enumField("offload_train_target", m.offloadTrainTarget, md.offloadTrainTarget);
        w.field("drop_checkpoint_page_cache_after_load", m.dropCheckpointPageCacheAfterLoad,
                md.dropCheckpointPageCacheAfterLoad);
        w.enumField("colocate_memory_peak_device", m.colocateMemoryPeakDevice,
                    md.colocateMemoryPeakDevice);
        w.enumField("backup_mode", m.backupMode, md.backupMode);
        w.field("reload_rollout_weights_from_disk", m.reloadRolloutWeightsFromDisk,
                md.reloadRolloutWeightsFromDisk);
        w.field("disable_weights_backuper", m.disableWeightsBackuper, md.disableWeightsBackuper);
        w.field("update_weight_buffer_gb", m.updateWeightBufferGb, md.updateWeightBufferGb);
        w.field("process_host_gb", m.processHostGb, md.processHostGb);
        w.field("process_gpu_gb", m.processGpuGb, md.processGpuGb);
        w.field("allocator_fragmentation", m.allocatorFragmentation, md.allocatorFragmentation);
    }
    {
        const WeightUpdate& u = r.weightUpdate;
        const WeightUpdate& ud = d.weightUpdate;
        SectionWriter w(top.emitter(), "weight_update", &top);
        w.enumField("mode", u.mode, ud.mode);
        w.enumField("transport", u.transport, ud.transport);
        w.field("disk_dir", u.diskDir);
        w.field("local_checkpoint_dir", u.localCheckpointDir);
        w.field("release_train", u.releaseTrain, ud.releaseTrain);
    }
    {
        const Environment& e = r.environment;
        SectionWriter w(top.emitter(), "environment", &top);
        w.field("nccl_version", e.ncclVersion);
        w.field("nccl_so_path", e.ncclSoPath);
        if (!e.env.empty()) {
            SectionWriter vars(top.emitter(), "env", &w);
            for (const auto& [key, value] : e.env) {
                vars.keyLine(key.c_str());
                detail::emitString(top.emitter(), value);
            }
        }
    }
    {
        const Checkpoints& c = r.checkpoints;
        SectionWriter w(top.emitter(), "checkpoints", &top);
        w.field("model_dir", c.modelDir);
        w.field("hf_checkpoint", c.hfCheckpoint);
        w.field("ref_load", c.refLoad);
        w.field("load", c.load);
        w.field("save", c.save);
        w.field("save_interval", c.saveInterval);
        w.field("converted_ep", c.convertedEp);
        w.field("no_save_optim", c.noSaveOptim, false);
        w.field("no_load_optim", c.noLoadOptim, false);
        w.field("opd_teacher_load", c.opdTeacherLoad);
    }
    {
        const Eval& e = r.eval;
        SectionWriter w(top.emitter(), "eval", &top);
        w.field("interval", e.interval);
        if (!e.datasets.empty()) {
            w.keyLine("datasets");
            YAML::Emitter& out = top.emitter();
            out << YAML::BeginSeq;
            for (const auto& dataset : e.datasets) {
                out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
                detail::emitString(out, dataset.name);
                out << YAML::Key << "path" << YAML::Value;
                detail::emitString(out, dataset.path);
                out << YAML::EndMap;
            }
            out << YAML::EndSeq;
        }
        w.field("n_samples_per_eval_prompt", e.nSamplesPerEvalPrompt, d.eval.nSamplesPerEvalPrompt);
        w.field("max_response_len", e.maxResponseLen);
        w.field("skip_eval_before_train", e.skipEvalBeforeTrain, false);
    }
    {
        const Launcher& l = r.launcher;
        SectionWriter w(top.emitter(), "launcher", &top);
        w.enumField("kind", l.kind);
        w.field("script", l.script);
        w.field("entry_point", l.entryPoint, d.launcher.entryPoint);
        w.field("argv", l.argv);
        w.field("workdir", l.workdir);
        w.field("pre_launch", l.preLaunch);
        w.field("ray_start_args", l.rayStartArgs);
        w.field("ray_stop", l.rayStop, d.launcher.rayStop);
        w.field("ray_stop_args", l.rayStopArgs);
    }
    {
        const Analysis& a = r.analysis;
        SectionWriter w(top.emitter(), "analysis", &top);
        w.field("primary_metric", a.primaryMetric);
        if (!a.metricKinds.empty()) {
            SectionWriter kinds(top.emitter(), "metric_kinds", &w);
            YAML::Emitter& out = top.emitter();
            for (const metrics::KindOverride& o : a.metricKinds) {
                kinds.keyLine(o.pattern.c_str());
                if (o.direction.has_value()) {
                    out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value
                        << detail::enumName(o.kind) << YAML::Key << "direction" << YAML::Value
                        << detail::enumName(*o.direction) << YAML::EndMap;
                } else {
                    out << detail::enumName(o.kind);
                }
            }
        }
        w.field("memory_alarm_gb", a.memoryAlarmGb);
    }
}

bool plainWords(const ExtraArg& arg) {
    if (!arg.source.empty() || arg.flag.empty()) {
        return false;
    }
    for (const auto& v : arg.values) {
        if (v.empty() || v.find_first_of(" \t\n") != std::string::npos) {
            return false;
        }
    }
    return arg.flag.find_first_of(" \t\n") == std::string::npos;
}

void writeExtraArgs(SectionWriter& top, const std::vector<ExtraArg>& args) {
    if (args.empty()) {
        return;
    }
    top.keyLine("extra_args");
    YAML::Emitter& out = top.emitter();
    out << YAML::BeginSeq;
    for (const auto& arg : args) {
        if (plainWords(arg)) {
            std::string line = arg.flag;
            for (const auto& v : arg.values) {
                line += ' ';
                line += v;
            }
            detail::emitString(out, line);
            continue;
        }
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "flag" << YAML::Value;
        detail::emitString(out, arg.flag);
        if (!arg.values.empty()) {
            out << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& v : arg.values) {
                detail::emitString(out, v);
            }
            out << YAML::EndSeq;
        }
        if (!arg.source.empty()) {
            out << YAML::Key << "source" << YAML::Value;
            detail::emitString(out, arg.source);
        }
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
}

}  // namespace

std::string writeRecipe(const Recipe& r) {
    YAML::Emitter out;
    out.SetIndent(2);
    {
        SectionWriter top(out, nullptr);
        top.keyLine("schema_version");
        out << r.schemaVersion;
        top.field("name", r.name);
        top.field("description", r.description);
        top.keyLine("framework");
        out << toString(r.framework);
        writeModel(top, r.model);
        writeSections(top, r);
        writeExtraArgs(top, r.extraArgs);
    }
    std::string text = out.c_str();
    text += '\n';
    return text;
}

}  // namespace runplane::plan
