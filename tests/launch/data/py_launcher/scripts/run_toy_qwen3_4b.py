# A miles-style launcher (Runplane test fixture): Qwen3-4B GRPO on one node, colocated.
from dataclasses import dataclass

import miles.utils.external_utils.command_utils as U


@dataclass
class ScriptArgs(U.ExecuteTrainConfig):
    mode: str = "normal"
    run_id: str = U.create_run_id()
    model_name: str = "Qwen3-4B"
    megatron_model_type: str = "qwen3-4B"
    num_gpus_per_node: int = 8
    model_dir: str = "/root/models"
    data_dir: str = "/root/datasets"
    num_rollout: int = 3000
    extra_args: str = ""

    def __post_init__(self):
        self.tensor_model_parallel_size = 2
        self.max_tokens_per_gpu = 9216


def prepare(args: ScriptArgs):
    U.exec_command_cpu(f"mkdir -p {args.model_dir} {args.data_dir}")
    U.hf_download(f"Qwen/{args.model_name}", f"{args.model_dir}/{args.model_name}")


def execute(args: ScriptArgs):
    debug = args.mode != "normal"
    ckpt_args = (
        f"--hf-checkpoint {args.model_dir}/{args.model_name} "
        f"--ref-load {args.model_dir}/{args.model_name}_torch_dist "
        f"--save {args.output_dir}/{args.run_id}/checkpoints "
        f"--save-interval {2 if debug else 20} "
    )
    rollout_args = (
        f"--prompt-data {args.data_dir}/dapo-math-17k/dapo-math-17k.jsonl "
        "--input-key prompt --label-key label --apply-chat-template --rollout-shuffle --rm-type math "
        f"--num-rollout {args.num_rollout} --rollout-batch-size 32 --n-samples-per-prompt 8 "
        "--rollout-max-response-len 8192 --rollout-temperature 1 --global-batch-size 256 "
    )
    grpo_args = "--advantage-estimator grpo --use-kl-loss --kl-loss-coef 0.00 --kl-loss-type low_var_kl "
    optimizer_args = "--optimizer adam --lr 1e-6 --lr-decay-style constant --weight-decay 0.1 "
    perf_args = (
        f"--tensor-model-parallel-size {args.tensor_model_parallel_size} --sequence-parallel "
        "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
        f"--use-dynamic-batch-size --max-tokens-per-gpu {args.max_tokens_per_gpu} "
    )
    sglang_args = "--rollout-num-gpus-per-engine 2 --sglang-mem-fraction-static 0.7 "
    misc_args = (
        f"--actor-num-nodes {args.num_nodes} --actor-num-gpus-per-node {args.num_gpus_per_node} "
        f"--num-gpus-per-node {args.num_gpus_per_node} --colocate "
    )
    U.execute_train(
        train_args=f"{ckpt_args} {rollout_args} {grpo_args} {optimizer_args} {perf_args} "
        f"{sglang_args} {misc_args} {args.extra_args}",
        num_gpus_per_node=args.num_gpus_per_node,
        megatron_model_type=args.megatron_model_type,
        config=args,
    )


@U.dataclass_cli
def main(args: ScriptArgs):
    prepare(args)
    execute(args)


if __name__ == "__main__":
    main()
