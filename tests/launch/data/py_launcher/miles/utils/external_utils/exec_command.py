# Stand-in for miles' exec_command helpers (Runplane test fixture): run a shell command.
import subprocess

import ray  # noqa: F401  (as miles: the multi-node variant runs on Ray)


def _exec_command(cmd: str, capture_output: bool = False):
    print(f"EXEC: {cmd}", flush=True)
    result = subprocess.run(["bash", "-c", cmd], check=True, capture_output=capture_output, text=True)
    return result.stdout if capture_output else None


def exec_command_cpu(cmd: str, capture_output: bool = False):
    return _exec_command(cmd, capture_output=capture_output)


def exec_command_gpu(cmd: str, capture_output: bool = False):
    return _exec_command(cmd, capture_output=capture_output)
