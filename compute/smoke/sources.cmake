# Source lists of runplane-smoke, shared by compute/smoke/CMakeLists.txt (the full tree) and
# compute/smoke/standalone/CMakeLists.txt (the GPU host, which has LibTorch but no gRPC/Qt).
# Torch-free core: flag parsing, task, log format, host buffers, GRPO scalars.
set(RUNPLANE_SMOKE_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/smoke_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/arith_task.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_memory.cpp
  ${CMAKE_CURRENT_LIST_DIR}/grpo_math.cpp)
# The only translation units that include <torch/torch.h> (~17 s each on 2 cores).
set(RUNPLANE_SMOKE_TORCH_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/policy_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/colocate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/smoke_workload.cpp)
set(RUNPLANE_SMOKE_MAIN ${CMAKE_CURRENT_LIST_DIR}/main.cpp)
