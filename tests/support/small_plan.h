#pragma once
// What the issue-43 suites that plan a run by role share (planned roles, role alarms, the
// Cluster page's plan markers): one small recipe whose plan is tens of MB per role, and the
// python interpreter itself for processes that take a framework's title with `exec -a`.

#include <cstdio>
#include <string>

namespace runplane::testing {

/// One GPU, trainer and one engine colocated, a 2-layer (≈ 50 MB) inline model shape and 30 MB
/// of host runtime per GPU process: its trainer backup and engine mirror are planned in tens of
/// MB. `name` is the recipe's name.
inline std::string smallColocatedRecipe(const std::string& name) {
    return "schema_version: 1\nname: " + name + R"(
description: one GPU, trainer and one engine colocated, a 50 MB model, 30 MB per process
framework: miles
model:
  shape:
    num_layers: 2
    hidden_size: 1024
    ffn_hidden_size: 2048
    gated_mlp: false
    num_attention_heads: 8
    vocab_size: 4096
hardware:
  gpu: H100
  gpu_memory_gb: 80
  gpus_per_node: 1
  host_ram_gb: 24
cluster:
  nodes: 1
  master_addr: 127.0.0.1
placement: colocate
rollout:
  gpus_per_engine: 1
  engines: 1
batch:
  rollout_batch_size: 8
  n_samples_per_prompt: 1
  global_batch_size: 8
  num_rollout: 1
lora:
  rank: 8
  alpha: 16
  target_modules: [q_proj, k_proj, v_proj, o_proj]
  base_cpu_backup: true
memory:
  process_host_gb: 0.03
launcher:
  kind: command
  argv: [/bin/true]
)";
}

/// The python interpreter itself (sys.executable): a pyenv shim on PATH would exec it again
/// under its own argv[0] and lose the title `exec -a` gave it.
inline std::string realPython() {
    std::string out;
    if (FILE* p = ::popen("python3 -c 'import sys; print(sys.executable)'", "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p) != nullptr) {
            out += buf;
        }
        ::pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
        out.pop_back();
    }
    return out.empty() ? "python3" : out;
}

}  // namespace runplane::testing
