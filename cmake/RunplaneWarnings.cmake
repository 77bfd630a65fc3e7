# runplane_warnings: an INTERFACE target that turns on strict warnings (as errors) for our own code.
# Link it PRIVATE into every first-party target; generated and third-party code never sees it.
add_library(runplane_warnings INTERFACE)
option(RUNPLANE_WERROR "Treat warnings in Runplane's own code as errors" ON)
target_compile_options(runplane_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${RUNPLANE_WERROR}>>:-Werror>)

# runplane_add_gtest(name SOURCES... LIBS...): one test binary per library, discovered by CTest.
function(runplane_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main runplane_warnings)
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    PROPERTIES LABELS "${labels}" ENVIRONMENT "RUNPLANE_SOURCE_DIR=${PROJECT_SOURCE_DIR};RUNPLANE_BINARY_DIR=${PROJECT_BINARY_DIR};QT_QPA_PLATFORM=offscreen;XDG_RUNTIME_DIR=/tmp"
    DISCOVERY_TIMEOUT 60)
endfunction()
