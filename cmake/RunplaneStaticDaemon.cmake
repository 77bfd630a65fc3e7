# runplaned linked against the static archives of its heavy dependencies (gRPC and what it pulls
# in, protobuf, SQLite, yaml-cpp, OpenSSL; Debian ships every one as a .a) with the C++ runtime
# static too and unused sections dropped: the daemon maps one executable instead of ~60 shared
# libraries, and pages only the code it runs. Measured in docs/performance.md ("Daemon beside
# node_exporter"): the node daemon's resident memory is its footprint on every GPU host.
#
# RUNPLANE_STATIC_DAEMON: AUTO (static where all the archives exist, else shared, said in the
# configuration summary), ON (an error when one is missing) or OFF. Every other target (tests,
# runplanectl, the GUI) links the shared libraries either way.
#
# How: the libraries in the daemon's dependency graph link these dependencies through the
# runplane_dep_<name> interface targets below, which resolve to the shared imported targets
# except in a target whose RUNPLANE_STATIC_DEPS property is ON (only runplaned); there they add
# nothing, and runplane_static_daemon_deps adds the archives once, as one rescanned group.
set(RUNPLANE_STATIC_DAEMON AUTO CACHE STRING
    "Link runplaned's dependencies from their static archives: AUTO, ON or OFF")

set(_runplane_static_in_shared "$<NOT:$<BOOL:$<TARGET_PROPERTY:RUNPLANE_STATIC_DEPS>>>")
function(runplane_dep name)
  add_library(runplane_dep_${name} INTERFACE)
  foreach(target IN LISTS ARGN)
    target_link_libraries(runplane_dep_${name} INTERFACE "$<${_runplane_static_in_shared}:${target}>")
  endforeach()
endfunction()
runplane_dep(grpc gRPC::grpc++)
runplane_dep(grpc_reflection gRPC::grpc++_reflection)
# RE2 (the log classifier's patterns, backend/agent/log_metrics.cpp): found by gRPC's own package
# config (re2::re2), linked from libre2.a in the static daemon's archive group.
runplane_dep(re2 re2::re2)
runplane_dep(protobuf protobuf::libprotobuf)
runplane_dep(sqlite SQLite::SQLite3)
runplane_dep(yaml yaml-cpp)
runplane_dep(openssl OpenSSL::SSL OpenSSL::Crypto)

set(RUNPLANE_HAVE_STATIC_DAEMON OFF)
if(NOT RUNPLANE_STATIC_DAEMON STREQUAL "OFF")
  # Link order inside the group does not matter (--start-group rescans); the archives' own
  # dependencies are all among them. abseil: every archive there is, the linker takes what is used.
  set(_names grpc++_reflection grpc++ grpc upb re2 cares address_sorting gpr protobuf sqlite3
             yaml-cpp ssl crypto z)
  set(_archives "")
  set(_missing "")
  foreach(name IN LISTS _names)
    find_library(RUNPLANE_STATIC_LIB_${name} NAMES lib${name}.a)
    if(RUNPLANE_STATIC_LIB_${name})
      list(APPEND _archives ${RUNPLANE_STATIC_LIB_${name}})
    else()
      list(APPEND _missing lib${name}.a)
    endif()
  endforeach()
  if(RUNPLANE_STATIC_LIB_grpc)
    get_filename_component(_dir ${RUNPLANE_STATIC_LIB_grpc} DIRECTORY)
    file(GLOB _absl ${_dir}/libabsl_*.a)
    if(_absl)
      list(APPEND _archives ${_absl})
    else()
      list(APPEND _missing libabsl_*.a)
    endif()
  endif()
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-static-libstdc++" RUNPLANE_LINKER_STATIC_LIBSTDCXX)
  if(NOT RUNPLANE_LINKER_STATIC_LIBSTDCXX)
    list(APPEND _missing "libstdc++.a")
  endif()
  if(_missing)
    if(RUNPLANE_STATIC_DAEMON STREQUAL "ON")
      message(FATAL_ERROR "RUNPLANE_STATIC_DAEMON=ON but no static archive for: ${_missing}")
    endif()
    runplane_summary_line("runplaned: shared libraries (no static archive for: ${_missing})")
  else()
    set(RUNPLANE_HAVE_STATIC_DAEMON ON)
    add_library(runplane_static_daemon_deps INTERFACE)
    target_link_libraries(runplane_static_daemon_deps INTERFACE
      "-Wl,--start-group" ${_archives} "-Wl,--end-group" Threads::Threads ${CMAKE_DL_LIBS} m rt)
    target_link_options(runplane_static_daemon_deps INTERFACE
      -static-libstdc++ -static-libgcc LINKER:--gc-sections)
    # One packed table of relative relocations (glibc >= 2.36, which the node bundle requires):
    # the loader no longer reads ~1 MB of .rela.dyn into memory at start.
    check_linker_flag(CXX "LINKER:-z,pack-relative-relocs" RUNPLANE_LINKER_PACK_RELATIVE_RELOCS)
    if(RUNPLANE_LINKER_PACK_RELATIVE_RELOCS)
      target_link_options(runplane_static_daemon_deps INTERFACE LINKER:-z,pack-relative-relocs)
    endif()
    runplane_summary_line("runplaned: static gRPC, protobuf, abseil, SQLite, yaml-cpp, OpenSSL, libstdc++ (RUNPLANE_STATIC_DAEMON=${RUNPLANE_STATIC_DAEMON})")
  endif()
else()
  runplane_summary_line("runplaned: shared libraries (RUNPLANE_STATIC_DAEMON=OFF)")
endif()

# Links `target` (runplaned) against the static archives when they are in use.
# (-ffunction-sections -fdata-sections on runplaned and our libraries in its graph was measured:
# 92 kB less text, no change in resident memory; not used.)
function(runplane_link_static_deps target)
  if(RUNPLANE_HAVE_STATIC_DAEMON)
    set_target_properties(${target} PROPERTIES RUNPLANE_STATIC_DEPS ON)
    target_link_libraries(${target} PRIVATE runplane_static_daemon_deps)
  endif()
endfunction()
