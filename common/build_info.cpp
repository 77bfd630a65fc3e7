#include "common/build_info.h"

#include <cstdio>
#include <cstring>

// Written at build time by build_values.cmake (only when a value changes, so a new commit
// recompiles this one file). Absent in bare g++ builds.
#if __has_include(<runplane_build_values.h>)
#include <runplane_build_values.h>
#endif
#ifndef RUNPLANE_BUILD_VERSION
#define RUNPLANE_BUILD_VERSION "unknown"
#endif
#ifndef RUNPLANE_BUILD_COMMIT
#define RUNPLANE_BUILD_COMMIT "unknown"
#endif
#ifndef RUNPLANE_BUILD_DATE
#define RUNPLANE_BUILD_DATE "unknown"
#endif

namespace runplane {

const BuildInfo& buildInfo() {
    static const BuildInfo info{RUNPLANE_BUILD_VERSION, RUNPLANE_BUILD_COMMIT, RUNPLANE_BUILD_DATE};
    return info;
}

std::string versionLine(const char* program) {
    const BuildInfo& b = buildInfo();
    return std::string(program) + " " + b.version + " (commit " + b.commit + ", built " + b.date +
           ")";
}

bool printVersionIfAsked(int argc, char** argv, const char* program) {
    if (argc != 2 || std::strcmp(argv[1], "--version") != 0) {
        return false;
    }
    std::printf("%s\n", versionLine(program).c_str());
    return true;
}

}  // namespace runplane
