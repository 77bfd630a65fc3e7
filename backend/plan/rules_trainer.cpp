// Rules on the model shape, the cluster and the trainer's parallel layout.

#include <algorithm>

#include "backend/plan/detail/recipe_flags.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

std::string str(int v) {
    return std::to_string(v);
}

bool isLoopback(const std::string& addr) {
    return addr.rfind("127.", 0) == 0 || addr == "localhost" || addr == "::1" || addr == "0.0.0.0";
}

bool localOnlyPath(const std::string& path) {
    if (path.empty()) {
        return false;
    }
    return path.front() != '/' || path.rfind("/tmp/", 0) == 0 || path.rfind("/dev/shm/", 0) == 0;
}

}  // namespace

void checkModelAndCluster(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const ModelShape& s = ctx.shape;
    const Layout& l = ctx.layout;
    // Model shape sanity.
    std::string problem;
    if (s.numLayers <= 0 || s.hidden <= 0 || s.numAttentionHeads <= 0 || s.vocabSize <= 0) {
        problem = "num_layers, hidden_size, num_attention_heads and vocab_size must be > 0";
    } else if (s.kvChannels == 0 && s.attention == AttentionKind::Gqa &&
               s.hidden % s.numAttentionHeads != 0) {
        problem = "hidden_size (" + str(s.hidden) + ") is not divisible by num_attention_heads (" +
                  str(s.numAttentionHeads) + ") and kv_channels is not given";
    } else if (s.attention == AttentionKind::Gqa && s.numAttentionHeads % s.queryGroups() != 0) {
        problem = "num_attention_heads (" + str(s.numAttentionHeads) +
                  ") is not divisible by num_query_groups (" + str(s.queryGroups()) + ")";
    } else if (s.isMoe() && (s.topK <= 0 || s.topK > s.numExperts)) {
        problem = "moe_router_topk (" + str(s.topK) + ") must be in 1.." + str(s.numExperts);
    } else if (s.firstKDense < 0 || s.firstKDense > s.numLayers) {
        problem = "first_k_dense (" + str(s.firstKDense) + ") exceeds num_layers (" +
                  str(s.numLayers) + ")";
    } else if (s.linear.kind != LinearAttentionKind::None &&
               (s.linear.numKeyHeads <= 0 || s.linear.numValueHeads <= 0 ||
                s.linear.numValueHeads % s.linear.numKeyHeads != 0)) {
        problem = "linear attention needs num_key_heads > 0 and num_value_heads (" +
                  str(s.linear.numValueHeads) + ") divisible by num_key_heads (" +
                  str(s.linear.numKeyHeads) + ")";
    }
    if (!problem.empty()) {
        ctx.emit("model.shape", r.model.shape.has_value() ? parts::kModelShape : fields::kModelName,
                 "model '" + s.name + "': " + problem, "fix the shape to match the HF config.json");
    }

    if (r.cluster.nodes < 1 || r.hardware.gpusPerNode < 0) {
        ctx.emit("cluster.size", fields::kClusterNodes,
                 "the cluster needs at least 1 node and >= 0 GPUs per node (nodes " +
                     str(r.cluster.nodes) + ", GPUs per node " + str(r.hardware.gpusPerNode) + ")",
                 "set cluster.nodes >= 1");
        return;
    }
    const bool cpuOnly = r.hardware.gpusPerNode == 0;
    if (cpuOnly && effectiveLauncher(r) != LauncherKind::Command) {
        ctx.emit("cluster.cpu-only", fields::kHardwareGpusPerNode,
                 "hardware.gpus_per_node is 0, but " + std::string(toString(r.framework)) +
                     " needs GPUs; only a local command launcher (runplane-smoke) runs on CPU",
                 "set hardware.gpus_per_node, or launcher.kind: command");
    }
    if (!cpuOnly) {
        if (l.trainerNodes > l.nodes || l.trainerGpusPerNode > l.gpusPerNode ||
            l.trainerGpusPerNode < 1) {
            ctx.emit("cluster.trainer-placement", fields::kTrainerNodes,
                     "the trainer asks for " + str(l.trainerNodes) + " nodes x " +
                         str(l.trainerGpusPerNode) + " GPUs, the cluster has " + str(l.nodes) +
                         " nodes x " + str(l.gpusPerNode) + " GPUs",
                     "lower trainer.nodes / trainer.gpus_per_node or grow the cluster");
        }
        const bool miles = r.framework == Framework::Miles;
        if (l.colocate) {
            if (miles && r.rollout.numGpus.has_value() && *r.rollout.numGpus != l.worldSize) {
                ctx.emit("cluster.gpu-budget", fields::kRolloutNumGpus,
                         "miles forces rollout_num_gpus to the actor's " + str(l.worldSize) +
                             " GPUs under colocate, but rollout.num_gpus is " +
                             str(*r.rollout.numGpus),
                         "remove rollout.num_gpus");
            } else if (std::max(l.worldSize, l.rolloutGpus) > l.clusterGpus) {
                ctx.emit("cluster.gpu-budget", fields::kRolloutNumGpus,
                         "colocate needs max(actor " + str(l.worldSize) + ", rollout " +
                             str(l.rolloutGpus) +
                             ") = " + str(std::max(l.worldSize, l.rolloutGpus)) +
                             " GPUs, the cluster has " + str(l.clusterGpus),
                         "lower rollout.num_gpus or add nodes");
            }
        } else if (const RecipeFlags flags(r);
                   flags.on("--debug-train-only") ||
                   flags.value("--load-debug-rollout-data").has_value()) {
            // train only (an SFT script): no engines, the placement group is the actor's alone
            // (slime placement_group.py _get_placement_group_layout)
            if (l.worldSize > l.clusterGpus) {
                ctx.emit("cluster.gpu-budget", fields::kTrainerNodes,
                         "--debug-train-only needs the actor's " + str(l.worldSize) +
                             " GPUs, the cluster has " + str(l.clusterGpus),
                         "shrink the actor or add nodes");
            }
        } else if (flags.runTime("--rollout-num-gpus") ||
                   flags.runTime("--actor-num-gpus-per-node")) {
            // the GPU split is computed on the node (`ROLLOUT_GPUS=$((NUM_GPUS - ACTOR_GPUS))`,
            // a pre-launch step): no budget to check before the job starts
        } else {
            if (l.rolloutGpus <= 0) {
                ctx.emit("cluster.gpu-budget", fields::kRolloutNumGpus,
                         "a disaggregated run needs rollout.num_gpus > 0 (engines get their own "
                         "GPUs)",
                         "set rollout.num_gpus, or placement: colocate");
            } else if (l.worldSize + l.rolloutGpus > l.clusterGpus) {
                ctx.emit("cluster.gpu-budget", fields::kRolloutNumGpus,
                         "disaggregated needs actor " + str(l.worldSize) + " + rollout " +
                             str(l.rolloutGpus) + " = " + str(l.worldSize + l.rolloutGpus) +
                             " GPUs, the cluster has " + str(l.clusterGpus) + " (" + str(l.nodes) +
                             " x " + str(l.gpusPerNode) + ")",
                         "add nodes, shrink the actor or the rollout, or colocate");
            }
        }
        if (l.gpusPerNode < 8) {
            ctx.emit("cluster.num-gpus-per-node", fields::kHardwareGpusPerNode,
                     "nodes have " + str(l.gpusPerNode) +
                         " GPUs: the launch passes --num-gpus-per-node " + str(l.gpusPerNode) +
                         " (rollout placement otherwise assumes 8)",
                     "keep hardware.gpus_per_node accurate; the exporter adds the flag");
        }
    }
    if (l.nodes > 1 && isLoopback(r.cluster.masterAddr)) {
        ctx.emit("cluster.master-addr", fields::kClusterMasterAddr,
                 "MASTER_ADDR is " + r.cluster.masterAddr + " on a " + str(l.nodes) +
                     "-node run; workers cannot reach a loopback address",
                 "use the head node's LAN IP (and make sure /etc/hosts does not map the "
                 "hostname to 127.0.0.1)");
    }
    if (l.nodes > 1) {
        const std::pair<FieldPath, const std::string*> paths[] = {
            {fields::kCheckpointsHfCheckpoint, &r.checkpoints.hfCheckpoint},
            {fields::kCheckpointsRefLoad, &r.checkpoints.refLoad},
            {fields::kCheckpointsLoad, &r.checkpoints.load},
            {fields::kCheckpointsSave, &r.checkpoints.save},
            {fields::kCheckpointsModelDir, &r.checkpoints.modelDir}};
        for (const auto& [field, value] : paths) {
            if (localOnlyPath(*value)) {
                ctx.emit("cluster.shared-paths", field,
                         field.str() + " is '" + *value + "', which other nodes of a " +
                             str(l.nodes) + "-node run cannot read",
                         "put models and checkpoints on a path every node reaches (NFS)");
            }
        }
    }
}

void checkTrainer(const RuleContext& ctx) {
    const Recipe& r = ctx.recipe;
    const Trainer& t = r.trainer;
    const ModelShape& s = ctx.shape;
    const Layout& l = ctx.layout;
    if (t.tp < 1 || t.pp < 1 || t.cp < 1 || t.ep < 1 || effectiveEtp(r) < 1) {
        ctx.emit("trainer.positive", parts::kTrainer,
                 "TP, PP, CP, EP and ETP must be >= 1 (TP " + str(t.tp) + ", PP " + str(t.pp) +
                     ", CP " + str(t.cp) + ", EP " + str(t.ep) + ", ETP " + str(effectiveEtp(r)) +
                     ")",
                 "use 1 for an unused dimension");
        return;
    }
    const bool cpuOnly = r.hardware.gpusPerNode == 0;
    if (!cpuOnly && l.worldSize > 0) {
        if (!l.denseGridOk) {
            const int grid = l.tp * l.pp * l.cp;
            ctx.emit("trainer.dense-grid", fields::kTrainerTp,
                     "world size (" + str(l.worldSize) + ") is not divisible by TP x PP x CP = " +
                         str(l.tp) + " x " + str(l.pp) + " x " + str(l.cp) + " = " + str(grid),
                     "choose TP, PP and CP whose product divides " + str(l.worldSize));
        }
        if (!l.expertGridOk) {
            const int grid = l.etp * l.ep * l.pp;
            std::string hint = "make ETP x EP x PP divide " + str(l.worldSize);
            if (l.worldSize % (l.etp * l.ep) == 0) {
                hint += " (e.g. PP 1 with EP " + str(l.ep) + ")";
            }
            hint += ", or run on " + str(grid) + " GPUs";
            ctx.emit("trainer.expert-grid", fields::kTrainerEp,
                     "world_size (" + str(l.worldSize) +
                         ") is not divisible by expert_tensor_model_pipeline_parallel size (" +
                         str(grid) + ") = ETP " + str(l.etp) + " x EP " + str(l.ep) + " x PP " +
                         str(l.pp),
                     hint);
        }
    }
    if (l.ep > 1 && !s.isMoe()) {
        ctx.emit("trainer.ep-needs-experts", fields::kTrainerEp,
                 "EP is " + str(l.ep) + " but '" + s.name + "' has no experts",
                 "set trainer.ep: 1");
    } else if (s.isMoe() && s.numExperts % l.ep != 0) {
        ctx.emit(
            "trainer.experts-ep", fields::kTrainerEp,
            "num_experts (" + str(s.numExperts) + ") is not divisible by EP (" + str(l.ep) + ")",
            "pick an EP that divides " + str(s.numExperts));
    }
    if (s.numAttentionHeads > 0 && s.numAttentionHeads % l.tp != 0) {
        ctx.emit("trainer.heads-tp", fields::kTrainerTp,
                 "num_attention_heads (" + str(s.numAttentionHeads) + ") is not divisible by TP (" +
                     str(l.tp) + ")",
                 "pick a TP that divides " + str(s.numAttentionHeads));
    }
    if (s.attention == AttentionKind::Gqa && s.queryGroups() > 0 && s.queryGroups() % l.tp != 0) {
        if (l.tp % s.queryGroups() == 0) {
            ctx.emit("trainer.groups-tp", Severity::Info, fields::kTrainerTp,
                     "num_query_groups (" + str(s.queryGroups()) + ") < TP (" + str(l.tp) +
                         "): only new Megatron accepts TP % groups == 0 (KV heads replicated " +
                         str(l.tp / s.queryGroups()) + "x); older Megatron requires groups % TP",
                     "use TP <= " + str(s.queryGroups()) + " unless the Megatron fork is recent");
        } else {
            ctx.emit("trainer.groups-tp", fields::kTrainerTp,
                     "num_query_groups (" + str(s.queryGroups()) + ") and TP (" + str(l.tp) +
                         ") do not divide each other",
                     "pick a TP that divides " + str(s.queryGroups()));
        }
    }
    if (s.linear.kind != LinearAttentionKind::None && s.linear.numKeyHeads > 0) {
        const int shard = l.tp * l.cp;
        if (s.linear.numKeyHeads % shard != 0 || s.linear.numValueHeads % shard != 0) {
            ctx.emit("trainer.linear-heads", fields::kTrainerTp,
                     std::string(toString(s.linear.kind)) + " heads (key " +
                         str(s.linear.numKeyHeads) + ", value " + str(s.linear.numValueHeads) +
                         ") are not divisible by TP x CP = " + str(shard),
                     "lower TP or CP");
        }
    }
    if (l.tp > 1 && !t.sequenceParallel) {
        ctx.emit("trainer.sequence-parallel", fields::kTrainerSequenceParallel,
                 "TP is " + str(l.tp) + " without sequence parallelism" +
                     (l.ep > 1 ? std::string(" (with EP " + str(l.ep) +
                                             ", sequence parallelism must be used)")
                               : std::string()),
                 "set trainer.sequence_parallel: true");
    } else if (l.tp == 1 && t.sequenceParallel) {
        ctx.emit("trainer.sequence-parallel", Severity::Info, fields::kTrainerSequenceParallel,
                 "sequence_parallel has no effect with TP 1 (Megatron turns it off)",
                 "remove trainer.sequence_parallel");
    }
    // Layers over pipeline stages.
    const int first = t.decoderFirstPipelineNumLayers.value_or(0);
    const int last = t.decoderLastPipelineNumLayers.value_or(0);
    if (l.pp == 1 && (first > 0 || last > 0)) {
        ctx.emit("trainer.uneven-pp-needs-pp",
                 first > 0 ? fields::kTrainerDecoderFirstPipelineNumLayers
                           : fields::kTrainerDecoderLastPipelineNumLayers,
                 "first/last pipeline stage sizes are set but PP is 1", "remove them or raise PP");
    } else if (l.pp > 1 && s.numLayers > 0) {
        const int middle = l.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
        const int rest = s.numLayers - first - last;
        if (first == 0 && last == 0) {
            if (s.numLayers % l.pp != 0) {
                ctx.emit("trainer.layers-pp", fields::kTrainerPp,
                         "num_layers (" + str(s.numLayers) + ") is not divisible by PP (" +
                             str(l.pp) + ")",
                         "use a PP that divides " + str(s.numLayers) +
                             ", or set decoder_last_pipeline_num_layers (e.g. " +
                             str(s.numLayers - (l.pp - 1) * ((s.numLayers + l.pp - 1) / l.pp)) +
                             ")");
            }
        } else if (rest < 0 || (middle == 0 && rest != 0) ||
                   (middle > 0 && (rest % middle != 0 || rest / middle == 0))) {
            ctx.emit("trainer.layers-pp",
                     last > 0 ? fields::kTrainerDecoderLastPipelineNumLayers
                              : fields::kTrainerDecoderFirstPipelineNumLayers,
                     "num_layers (" + str(s.numLayers) + ") - first (" + str(first) + ") - last (" +
                         str(last) + ") = " + str(rest) + " layers do not split evenly over the " +
                         str(middle) + " middle stages of PP " + str(l.pp),
                     "choose first/last so the rest is a positive multiple of " +
                         str(std::max(middle, 1)));
        }
    }
    if (t.numLayersPerVirtualStage.has_value()) {
        const int v = *t.numLayersPerVirtualStage;
        const int perStage = l.pp > 0 ? s.numLayers / l.pp : 0;
        if (l.pp <= 1 || v <= 0 || perStage % v != 0) {
            ctx.emit("trainer.vpp", fields::kTrainerNumLayersPerVirtualStage,
                     "virtual pipeline needs PP > 1 and layers per stage (" + str(perStage) +
                         ") divisible by layers per virtual stage (" + str(v) + ")",
                     "remove num_layers_per_virtual_stage or pick a divisor of " + str(perStage));
        }
    }
    // slime and miles both have the FSDP backend (slime/backends/fsdp_utils); both FSDP actors
    // apply LoRA (slime fsdp_utils/lora_utils.py, miles miles/backends/fsdp_utils/lora_utils.py)
    if (t.backend == TrainBackend::Fsdp &&
        (r.framework == Framework::Vime || l.tp > 1 || l.pp > 1 || l.cp > 1 || l.ep > 1)) {
        ctx.emit("trainer.fsdp", fields::kTrainerBackend,
                 "the FSDP backend (slime, miles; not vime) has no TP/PP/CP/EP (framework " +
                     std::string(toString(r.framework)) + ", TP " + str(l.tp) + ", PP " +
                     str(l.pp) + ", CP " + str(l.cp) + ", EP " + str(l.ep) + ")",
                 "use backend: megatron");
    }
}

}  // namespace runplane::plan::detail
