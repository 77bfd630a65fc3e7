// runplane-nccl-resolve: which libnccl a run with this environment would load, plus the version
// gate. Dependency-free (builds on the GPU host with plain g++). Prints one JSON object.
// Usage: runplane-nccl-resolve [--inherit-env] [--env K=V]... [--python P] [--min-version 2.30.7]
//                              [--version-helper PATH]
// Exit: 0 gate passes, 1 gate fails, 2 usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/build_info.h"
#include "compute/gpu/json_text.h"
#include "compute/gpu/nccl_gate.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/subprocess.h"

int main(int argc, char** argv) {
    using namespace runplane::compute;
    if (runplane::printVersionIfAsked(argc, argv, "runplane-nccl-resolve")) {
        return 0;
    }
    using json::quote;
    NcclResolveConfig config;
    int minVersion = kNcclMinVersionCrossNodeCudaGraph;
    const auto usage = [] {
        std::fprintf(stderr,
                     "usage: runplane-nccl-resolve [--inherit-env] [--env K=V]... [--python P] "
                     "[--min-version X.Y.Z] [--version-helper PATH]\n");
        return 2;
    };
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        const bool hasValue = k + 1 < argc;
        if (arg == "--inherit-env") {
            for (const auto& entry : currentEnvironment()) {
                const auto eq = entry.find('=');
                if (eq != std::string::npos)
                    config.env[entry.substr(0, eq)] = entry.substr(eq + 1);
            }
        } else if (arg == "--env" && hasValue) {
            const std::string pair = argv[++k];
            const auto eq = pair.find('=');
            if (eq == std::string::npos || eq == 0) {
                std::fprintf(stderr, "--env %s: expected KEY=VALUE\n", pair.c_str());
                return 2;
            }
            config.env[pair.substr(0, eq)] = pair.substr(eq + 1);
        } else if (arg == "--python" && hasValue) {
            config.python = argv[++k];
        } else if (arg == "--version-helper" && hasValue) {
            config.versionHelperPath = argv[++k];
        } else if (arg == "--min-version" && hasValue) {
            minVersion = parseNcclVersionCode(argv[++k]);
            if (minVersion == 0) {
                std::fprintf(stderr, "--min-version %s: expected MAJOR.MINOR.PATCH\n", argv[k]);
                return 2;
            }
        } else {
            return usage();
        }
    }
    const auto libraries = resolveNcclLibraries(config);
    const auto gate = checkNcclRequirement(libraries, minVersion);
    std::string out = "{\"libraries\":[";
    for (std::size_t k = 0; k < libraries.size(); ++k) {
        const auto& lib = libraries[k];
        out += (k ? "," : "") + std::string("{\"path\":") + quote(lib.path) +
               ",\"source\":" + quote(toString(lib.source)) +
               ",\"version_code\":" + std::to_string(lib.versionCode) +
               ",\"version\":" + quote(lib.version) + ",\"error\":" + quote(lib.error) +
               ",\"selected\":" + (lib.selected ? "true" : "false") + "}";
    }
    out += "],\"gate\":{\"min_version\":" + quote(formatNcclVersion(minVersion)) +
           ",\"pass\":" + (gate.pass ? "true" : "false") + ",\"message\":" + quote(gate.message) +
           "}}";
    std::printf("%s\n", out.c_str());
    return gate.pass ? 0 : 1;
}
