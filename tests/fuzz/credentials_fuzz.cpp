// Credential paths (issue 41 item 8): the metrics web config and a cluster profile, each naming
// its token, certificate and key files among hostile fixtures (a FIFO with no writer, a symlink
// to it, /dev/zero, a directory, a 2 MiB file, a missing path, an empty file, a good token), with
// fuzzed YAML after those keys. Every input must end, in bounded time, in a config or an error
// (a FIFO blocked runplaned's start and runplanectl for good before the shared reader).
//
// Input: five selector bytes (bearer_token_file, cert_file, key_file, client_ca_file, the
// profile's token_file: each an index into the fixture table), then YAML text appended to both
// files. Inputs whose text holds a '/' are skipped: the fuzzed text must not name paths outside
// the fixture folder (opening some devices, e.g. a watchdog, has side effects).
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/metrics_web_config.h"
#include "backend/control/cluster_profile.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

struct Fixture {
    std::string dir;
    std::vector<std::string> paths;
};

const Fixture& fixture() {
    static const Fixture f = [] {
        Fixture x;
        x.dir = runplane::fuzz::scratchDir("credentials");
        const std::string fifo = x.dir + "/fifo";
        ::mkfifo(fifo.c_str(), 0600);
        std::filesystem::create_symlink(fifo, x.dir + "/link-to-fifo");
        std::ofstream(x.dir + "/token") << "token-0123456789abcdef\n";
        std::ofstream(x.dir + "/empty");
        std::ofstream(x.dir + "/huge") << std::string(2u << 20, 'h');
        std::filesystem::create_directories(x.dir + "/folder");
        x.paths = {x.dir + "/token",        fifo,
                   x.dir + "/link-to-fifo", "/dev/zero",
                   x.dir + "/folder",       x.dir + "/huge",
                   x.dir + "/missing",      x.dir + "/empty"};
        return x;
    }();
    return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    runplane::fuzz::quietProtobuf();
    const Fixture& f = fixture();
    runplane::fuzz::ByteReader in(data, size);
    std::string pick[5];
    for (auto& p : pick) {
        p = f.paths[in.u8() % f.paths.size()];
    }
    const std::string text = in.rest();
    if (text.find('/') != std::string::npos) {
        return 0;
    }
    const std::string web = f.dir + "/web.yml";
    std::ofstream(web, std::ios::trunc)
        << "bearer_token_file: " << pick[0] << "\ntls_server_config:\n  cert_file: " << pick[1]
        << "\n  key_file: " << pick[2] << "\n  client_ca_file: " << pick[3] << "\n"
        << text;
    (void)runplane::agent::loadMetricsWebConfig(web);
    const std::string profile = f.dir + "/cluster.yaml";
    std::ofstream(profile, std::ios::trunc)
        << "nodes:\n  - address: 127.0.0.1:7070\ntoken_file: " << pick[4] << "\n"
        << text;
    if (auto p = runplane::control::loadClusterProfile(profile); p.ok() && !p->tokenFile.empty()) {
        (void)runplane::control::readClientTokenFile(p->tokenFile, "token_file");
    }
    (void)runplane::control::readClientTokenFile(pick[4], "token_file");
    return 0;
}
