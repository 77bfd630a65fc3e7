# Stand-in for miles' command_utils (Runplane test fixture): the helpers a launcher script calls.
import argparse
import dataclasses
import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from miles.utils.external_utils.exec_command import exec_command_cpu, exec_command_gpu

repo_base_dir = Path(os.path.abspath(__file__)).resolve().parents[3]

_MODEL_ARGS = {
    "qwen3-4B": "--swiglu --num-layers 36 --hidden-size 2560 --ffn-hidden-size 9728 "
    "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
    "--use-rotary-position-embeddings --disable-bias-linear --normalization RMSNorm "
    "--norm-epsilon 1e-6 --rotary-base 1000000 --vocab-size 151936 --kv-channels 128 --qk-layernorm",
}


@dataclass
class ExecuteTrainConfig:
    num_nodes: int = field(default_factory=lambda: int(os.environ.get("SLURM_JOB_NUM_NODES", "1")))
    output_dir: str = "/root/shared_data"


def create_run_id() -> str:
    return "toy-run"


def hf_download(name: str, local_dir: str):
    exec_command_cpu(f"hf download {name} --local-dir {local_dir}")


def execute_train(train_args: str, num_gpus_per_node: int, megatron_model_type: str,
                  config: ExecuteTrainConfig, train_script: str = "train.py"):
    master_addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    exec_command_cpu("pkill -9 sglang; sleep 3; ray stop --force; pkill -9 ray; true; ")
    exec_command_cpu(
        f"export PYTHONUNBUFFERED=1 && ray start --head --node-ip-address {master_addr} "
        f"--num-gpus {num_gpus_per_node} --disable-usage-stats"
    )
    has_nvlink = int(exec_command_gpu("nvidia-smi topo -m 2>/dev/null | grep -o 'NV[0-9]' | wc -l",
                                      capture_output=True)) > 0
    env = {"env_vars": {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_NVLS_ENABLE": str(int(has_nvlink)),
                        "MASTER_ADDR": master_addr, "PYTHONPATH": f"{repo_base_dir}:/root/Megatron-LM"}}
    exec_command_cpu(
        f"export no_proxy=127.0.0.1 && "
        f'ray job submit --address="http://127.0.0.1:8265" '
        f"--runtime-env-json={shlex.quote(json.dumps(env))} "
        f"-- python3 {repo_base_dir}/{train_script} {_MODEL_ARGS[megatron_model_type]} {train_args}"
    )


def dataclass_cli(func):
    """main(args: Config) as a command line: one --option per dataclass field."""
    config_type = func.__annotations__["args"]

    def run():
        parser = argparse.ArgumentParser()
        for f in dataclasses.fields(config_type):
            if f.init:
                kind = f.type if f.type in (int, float) else str
                parser.add_argument("--" + f.name.replace("_", "-"), type=kind, default=None)
        given = {k: v for k, v in vars(parser.parse_args()).items() if v is not None}
        return func(config_type(**given))

    return run
