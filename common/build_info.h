// Build identity of every Runplane program: version, git commit and build date. Printed by each
// program's --version, reported by the daemon in GetNode and on /metrics (runplane_build_info),
// so an operator can tell which build runs on a node.
//
// Plain C++17 without dependencies: the GPU helpers are also built with bare g++ on GPU hosts
// (scripts/gpu/nccl.sh), where the generated values are absent and every field reads "unknown".
#pragma once

#include <string>

namespace runplane {

struct BuildInfo {
    const char* version;  // the CMake project version, e.g. "0.1.0"
    const char* commit;   // git commit (12 hex digits, "-dirty" when the tree had changes)
    const char* date;     // UTC build date, YYYY-MM-DD (SOURCE_DATE_EPOCH when set)
};

const BuildInfo& buildInfo();

// "runplaned 0.1.0 (commit 1a2b3c4d5e6f, built 2026-12-03)"
std::string versionLine(const char* program);

// For mains that parse argv by hand: when the only argument is --version, prints versionLine to
// stdout and returns true (the caller exits 0).
bool printVersionIfAsked(int argc, char** argv, const char* program);

}  // namespace runplane
