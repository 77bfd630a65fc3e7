# Build speed (issue 50): unity builds and precompiled headers for the first-party libraries, so
# that a cold `make demo` on 2 cores compiles about half as much. Conventions: docs/architecture.md
# ("Unity builds and precompiled headers"); figures: docs/results/2026-12-06-make-demo-cold-2.md.
#
# Both are tables below, applied by runplane_apply_build_speed() from the top-level CMakeLists.txt
# once every target exists, so no library's own CMakeLists.txt changes:
#   RUNPLANE_SPEED_TARGETS  target -> precompiled-header family (or "-" for none), and whether it
#                           has been compiled in unity batches under -Werror: "yes" rows are built
#                           in batches of RUNPLANE_UNITY_BATCH files by default, "no" rows only with
#                           -DRUNPLANE_UNITY_BUILD=ALL (a row turns "yes" once a build with ALL
#                           passed, `make test` included).
#   RUNPLANE_UNITY_SKIP     source files kept out of the unity batches, each with the file-local
#                           name it shares with another file of its target (two anonymous-namespace
#                           or static definitions of one name cannot share a translation unit;
#                           scripts/unity-clashes.py finds them, and the `unity_clashes` test fails
#                           when a new one is not listed here).
#
# Unity batches are off in the fuzz build (clang, sanitizers, a few parser libraries): it compiles
# every file on its own, so a file that leans on a header only the PCH or a unity neighbour brought
# in still fails there. RUNPLANE_UNITY_BUILD=OFF gives the plain per-file build anywhere.
#
# Precompiled headers are OFF by default (-DRUNPLANE_PCH=ON turns the table's families on): with
# GCC 12 a file compiled against a PCH got -Werror=array-bounds false positives from inside
# libstdc++'s std::string operator+ (backend/plan/detail/text_checks.cpp:272, a warning that is
# suppressed as a system-header one when <string> is included normally), so a PCH can break the
# warnings-as-errors build in a file no one touched. Measured, the unity batches give most of the
# saving anyway (docs/results/2026-12-06-make-demo-cold-2.md).
# Debug information (issue 50, and CI's disk): full -g made the RelWithDebInfo tree about 10 GB,
# nine tenths of it DWARF in the ~100 statically linked test and program binaries, and a CI run
# ran out of disk linking them. -g1 keeps what a crash report needs (functions and line tables,
# so backtraces, perf and py-spy-style native frames name file:line) without the variable and type
# descriptions, and compiles and links faster. -DRUNPLANE_DEBUG_INFO=full restores -g for a
# debugging session; the fuzz build sets its own (-gline-tables-only, RunplaneFuzz.cmake).
set(RUNPLANE_DEBUG_INFO lines CACHE STRING
    "Debug information in RelWithDebInfo builds: lines (-g1, the default) or full (-g)")
set_property(CACHE RUNPLANE_DEBUG_INFO PROPERTY STRINGS lines full)
if(RUNPLANE_DEBUG_INFO STREQUAL "lines")
  foreach(_runplane_lang C CXX)
    string(REGEX REPLACE "(^| )-g( |$)" "\\1-g1\\2" CMAKE_${_runplane_lang}_FLAGS_RELWITHDEBINFO
                         "${CMAKE_${_runplane_lang}_FLAGS_RELWITHDEBINFO}")
  endforeach()
  runplane_summary_line("Debug information: line tables (-g1), RUNPLANE_DEBUG_INFO=full for -g")
elseif(NOT RUNPLANE_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "RUNPLANE_DEBUG_INFO is '${RUNPLANE_DEBUG_INFO}': lines or full")
endif()

if(RUNPLANE_FUZZ)
  set(_runplane_speed_default OFF)
else()
  set(_runplane_speed_default ON)
endif()
set(RUNPLANE_UNITY_BUILD ${_runplane_speed_default} CACHE STRING
    "Unity batches: ON (the libraries of the table checked so far), ALL (every library in it) or OFF")
option(RUNPLANE_PCH "Precompiled headers for the first-party libraries (off by default: see below)" OFF)
set(RUNPLANE_UNITY_BATCH 8 CACHE STRING "Source files per unity translation unit")

# ccache and precompiled headers (ccache manual, "Precompiled headers"; ccache 4.7 here, whose
# launcher cannot take KEY=VALUE settings): sloppiness pch_defines,time_macros is required, and
# include_file_mtime,include_file_ctime lets a .gch made a moment ago be hashed in direct mode.
# Passed through the environment of the launcher, merged with whatever the user's ccache.conf has.
if(RUNPLANE_PCH AND CMAKE_CXX_COMPILER_LAUNCHER)
  list(GET CMAKE_CXX_COMPILER_LAUNCHER 0 _runplane_launcher)
  get_filename_component(_runplane_launcher_name "${_runplane_launcher}" NAME)
  if(_runplane_launcher_name STREQUAL "ccache")
    execute_process(COMMAND ${_runplane_launcher} -k sloppiness OUTPUT_VARIABLE _runplane_sloppy
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE " " "" _runplane_sloppy "${_runplane_sloppy}")
    string(REPLACE "," ";" _runplane_sloppy "${_runplane_sloppy}")
    list(APPEND _runplane_sloppy pch_defines time_macros include_file_mtime include_file_ctime)
    list(REMOVE_DUPLICATES _runplane_sloppy)
    list(REMOVE_ITEM _runplane_sloppy "")
    list(JOIN _runplane_sloppy "," _runplane_sloppy)
    # A normal variable: targets created from here on take it as their CXX_COMPILER_LAUNCHER.
    set(CMAKE_CXX_COMPILER_LAUNCHER env "CCACHE_SLOPPINESS=${_runplane_sloppy}"
        ${CMAKE_CXX_COMPILER_LAUNCHER})
    set(RUNPLANE_CCACHE_SLOPPINESS "${_runplane_sloppy}")
  endif()
endif()

# Precompiled-header families: only third-party and standard headers (a Runplane header in a PCH
# would reach targets that do not link its library, bypassing runplane_stage_headers).
set(RUNPLANE_PCH_FAMILY_std
  <algorithm> <array> <chrono> <cstdint> <cstring> <filesystem> <functional> <map> <memory>
  <mutex> <optional> <set> <sstream> <string> <string_view> <unordered_map> <utility> <vector>)
set(RUNPLANE_PCH_FAMILY_json ${RUNPLANE_PCH_FAMILY_std} <nlohmann/json.hpp>)
# runplanectl's command groups: CLI11 (header-only) and nlohmann::json in nearly every file.
set(RUNPLANE_PCH_FAMILY_cli ${RUNPLANE_PCH_FAMILY_json} <iostream> <fstream> <CLI/CLI.hpp>)
# Qt without widgets (runplane_gui_models links QtCore and QtGui only).
set(RUNPLANE_PCH_FAMILY_qt_core ${RUNPLANE_PCH_FAMILY_std} <QString> <QStringList> <QObject>
  <QColor> <QBrush> <QDateTime> <QAbstractTableModel> <QMetaObject> <QCoreApplication> <QTimer>)
set(RUNPLANE_PCH_FAMILY_qt_widgets ${RUNPLANE_PCH_FAMILY_qt_core} <QWidget> <QLabel>
  <QVBoxLayout> <QHBoxLayout> <QHeaderView> <QLineEdit> <QComboBox> <QTableView> <QSplitter>
  <QPushButton> <QDoubleSpinBox> <QTabWidget> <QScrollArea> <QPlainTextEdit> <QFileInfo>
  <QMessageBox> <QPainter> <QApplication> <QDir>)

# target                       PCH family   compiled as unity batches with -Werror (GCC 12)
set(RUNPLANE_SPEED_TARGETS
  runplane_plan                std          yes
  runplane_launch              json         yes
  runplane_db                  json         yes
  runplane_imports             json         yes
  runplane_alerts              -            yes
  runplane_diagnosis           -            yes
  runplane_agent               json         yes
  runplane_agent_proc          -            yes
  runplane_control             json         yes
  runplanectl_commands         cli          yes
  runplane_compute             -            yes
  runplane_smoke_core          -            yes
  runplane_smoke               -            yes
  runplane_gui_widgets         qt_widgets   yes
  runplane_gui_models          qt_core      yes
  runplane_gui_pages           qt_widgets   yes
  runplane_gui_app             qt_widgets   yes
)

# file (source-relative)                     the name it shares        with
set(RUNPLANE_UNITY_SKIP
  backend/plan/rules.cpp                      "S"                       recipe_limits.cpp
  backend/plan/rules_misc.cpp                 "str"                     rules_batch.cpp
  backend/plan/rules_trainer.cpp              "str"                     rules_batch.cpp
  backend/plan/detail/text_checks.cpp         "at"                      memory_model.cpp
  backend/launch/import_command.cpp           "baseName"                bash_eval.cpp
  backend/launch/flag_rows_misc.cpp           "kRows"                   flag_rows_engine.cpp
  backend/launch/flag_rows_train.cpp          "kRows"                   flag_rows_engine.cpp
  backend/agent/diagnose.cpp                  "nowUnixNs"               "spool.cpp (external, declared in spool.h)"
  backend/agent/collector.cpp                 "isFinal"                 agent_service.cpp
  backend/agent/role_memory.cpp               "kMaxDepth"               python_literal.cpp
  backend/agent/metrics_http.cpp              "lower,trim"              preflight.cpp,process_roles.cpp
  backend/agent/process_roles.cpp             "validRoleName"           run_role_plan.cpp
  backend/agent/log_formats/oom.cpp           "bytesText"               preflight.cpp
  backend/agent/log_formats/megatron.cpp      "parseValue"              engine_metrics.cpp
  backend/alerts/transport.cpp                "unixNowNs"               "sender.cpp (external there)"
  backend/control/node_client.cpp             "prepare"                 dispatch_rpc.cpp
  backend/control/preflight_clients.cpp       "Clock"                   diagnose.cpp
  backend/diagnosis/gpu_clocks.cpp            "intField"                ras.cpp
  backend/cli/dispatch_commands.cpp           "StopOptions,runStop,addCommon,executableDir" run_commands.cpp,plan_commands.cpp
  backend/cli/launch_commands.cpp             "executableDir,loadCatalog,runImport" plan_commands.cpp,import_commands.cpp
  backend/cli/plan_from_run.cpp               "gb,json"                 memory_commands.cpp
  backend/cli/run_lineage_cli.cpp             "nowNs,openHistory"       import_commands.cpp,history_commands.cpp
  db/imports/tabular.cpp                      "secondsToNs"             miles_dashboard.cpp
  db/imports/wandb.cpp                        "kMaxRecordBytes,secondsToNs" tfevents.cpp
  gui/models/node_table_model.cpp             "nowSeconds,stateColor"   run_models.cpp
  gui/models/run_models.cpp                   "nowSeconds"              history_queries.cpp
  gui/models/run_derivations.cpp              "attr"                    history_queries.cpp
  gui/pages/plan_views.cpp                    "barOf"                   cluster_roles_panel.cpp
  gui/pages/runs_page.cpp                     "kListRefreshMs"          compare_page.cpp
  gui/pages/cluster_page.cpp                  "kRefreshMs"              alerts_page.cpp
  gui/pages/diagnosis_view.cpp                "timeText"                alerts_page.cpp
  gui/pages/run_view.cpp                      "timeText"                alerts_page.cpp
  gui/widgets/topology_view.cpp               "kGap"                    role_split_bars.cpp
  compute/gpu/nccl_unique_id.cpp              "kUniqueIdBytes"          nccl_probe.cpp
)

function(runplane_apply_build_speed)
  set(manifest "")
  set(speed ${RUNPLANE_SPEED_TARGETS})
  while(speed)
    list(POP_FRONT speed target family checked)
    if(NOT TARGET ${target})
      continue()
    endif()
    if(RUNPLANE_UNITY_BUILD STREQUAL "ALL" OR (RUNPLANE_UNITY_BUILD AND checked STREQUAL "yes"))
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
                                                 UNITY_BUILD_BATCH_SIZE ${RUNPLANE_UNITY_BATCH})
    endif()
    if(RUNPLANE_PCH AND NOT family STREQUAL "-")
      if(NOT DEFINED RUNPLANE_PCH_FAMILY_${family})
        message(FATAL_ERROR "RUNPLANE_SPEED_TARGETS: ${target} names an unknown PCH family '${family}'")
      endif()
      target_precompile_headers(${target} PRIVATE ${RUNPLANE_PCH_FAMILY_${family}})
    endif()
    # For scripts/unity-clashes.py: target, then its C++ sources (absolute), skipped ones marked.
    get_target_property(dir ${target} SOURCE_DIR)
    get_target_property(sources ${target} SOURCES)
    set(line "${target}")
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "\\.(cpp|cc|cxx)$")
        continue()
      endif()
      cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${dir} NORMALIZE OUTPUT_VARIABLE path)
      list(FIND RUNPLANE_UNITY_SKIP_FILES "${path}" skipped)
      if(skipped GREATER -1)
        string(APPEND line "\t!${path}")
      else()
        string(APPEND line "\t${path}")
      endif()
    endforeach()
    string(APPEND manifest "${line}\n")
  endwhile()
  file(WRITE ${PROJECT_BINARY_DIR}/unity-targets.tsv "${manifest}")
endfunction()

# The skip table as absolute paths, with SKIP_UNITY_BUILD_INCLUSION set in each owner's directory.
function(runplane_mark_unity_skips)
  set(files "")
  set(skips ${RUNPLANE_UNITY_SKIP})
  set(speed ${RUNPLANE_SPEED_TARGETS})
  while(skips)
    list(POP_FRONT skips file names with)
    set(path ${PROJECT_SOURCE_DIR}/${file})
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "RUNPLANE_UNITY_SKIP: ${file} does not exist")
    endif()
    list(APPEND files ${path})
    # Every listed target that has this file among its sources gets the property in its directory.
    set(targets ${speed})
    while(targets)
      list(POP_FRONT targets target family checked)
      if(NOT TARGET ${target})
        continue()
      endif()
      get_target_property(dir ${target} SOURCE_DIR)
      get_target_property(sources ${target} SOURCES)
      foreach(source IN LISTS sources)
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${dir} NORMALIZE OUTPUT_VARIABLE abs)
        if(abs STREQUAL path)
          set_source_files_properties(${path} TARGET_DIRECTORY ${target}
                                      PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
        endif()
      endforeach()
    endwhile()
  endwhile()
  set(RUNPLANE_UNITY_SKIP_FILES ${files} PARENT_SCOPE)
endfunction()

macro(runplane_build_speed)
  runplane_mark_unity_skips()
  runplane_apply_build_speed()
endmacro()
