# RUNPLANE_FUZZ: the libFuzzer build (docs/fuzzing.md). Every first-party and generated source is
# compiled with coverage instrumentation (fuzzer-no-link) and AddressSanitizer + UndefinedBehavior-
# Sanitizer; the fuzz targets in tests/fuzz link libFuzzer's main (-fsanitize=fuzzer). Debian's
# gRPC, protobuf and yaml-cpp are gcc builds against libstdc++: clang links them with libstdc++ too.
option(RUNPLANE_FUZZ "Build the libFuzzer targets of tests/fuzz with ASan + UBSan (clang only)" OFF)
if(RUNPLANE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RUNPLANE_FUZZ=ON needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14 "
                        "-DCMAKE_C_COMPILER=clang-14), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  # Any undefined behaviour stops the run like a crash (no "recover and go on").
  set(RUNPLANE_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${RUNPLANE_SANITIZERS} -gline-tables-only)
  add_link_options(${RUNPLANE_SANITIZERS})
  runplane_summary_line("Fuzzing: libFuzzer + ASan + UBSan (tests/fuzz)")
endif()
