# runplane_warnings: an INTERFACE target that turns on strict warnings (as errors) for our own code.
# Link it PRIVATE into every first-party target; generated and third-party code never sees it.
add_library(runplane_warnings INTERFACE)
option(RUNPLANE_WERROR "Treat warnings in Runplane's own code as errors" ON)
# -Wshadow=local is GCC's spelling (clang, used for the fuzz build, does not know it).
target_compile_options(runplane_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
  -Wnon-virtual-dtor -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${RUNPLANE_WERROR}>>:-Werror>)

# runplane_add_gtest(name SOURCES... LIBS... [LABELS...] [FIXTURES...]): one test binary per
# library, discovered by CTest; FIXTURES are CTest fixtures every discovered test requires; LOCK
# names a CTest RESOURCE_LOCK its tests hold (e.g. `ray`: `ray stop` ends every Ray process a host
# can see, so two suites that run Ray must not overlap).
# SERIAL: its tests run with nothing else beside them (RUN_SERIAL), for suites whose real
# components time out when the machine is busy (Ray's raylet start on a loaded 2-core machine).
function(runplane_add_gtest name)
  cmake_parse_arguments(ARG "SERIAL" "LOCK" "SOURCES;LIBS;LABELS;FIXTURES" ${ARGN})
  set(run_serial OFF)
  if(ARG_SERIAL)
    set(run_serial ON)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main runplane_warnings)
  # The suite's own folder (tests/<part>/*.h); the headers of what it tests come with ARG_LIBS.
  file(RELATIVE_PATH own_folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  runplane_stage_headers(${name} PRIVATE ${own_folder})
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    DISCOVERY_TIMEOUT 60)
  # gtest_discover_tests flattens list-valued PROPERTIES (an ENVIRONMENT of several variables, two
  # labels) into separate arguments, so only the first item would survive. Set them instead from an
  # include file that CTest reads after the discovered list (${name}_TESTS) is defined.
  set(environment
    "RUNPLANE_SOURCE_DIR=${PROJECT_SOURCE_DIR}" "RUNPLANE_BINARY_DIR=${PROJECT_BINARY_DIR}"
    "QT_QPA_PLATFORM=offscreen" "XDG_RUNTIME_DIR=/tmp"
    "RUNPLANE_SCREENSHOT_DIR=${PROJECT_BINARY_DIR}/screenshots")
  set(properties_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_properties.cmake")
  file(WRITE "${properties_file}"
    "foreach(test_name IN LISTS ${name}_TESTS)\n"
    "  set_tests_properties(\"\${test_name}\" PROPERTIES\n"
    "    LABELS [==[${labels}]==]\n"
    "    ENVIRONMENT [==[${environment}]==]\n"
    "    FIXTURES_REQUIRED [==[${ARG_FIXTURES}]==]\n"
    "    RESOURCE_LOCK [==[${ARG_LOCK}]==]\n"
    "    RUN_SERIAL ${run_serial})\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${properties_file}")
endfunction()
