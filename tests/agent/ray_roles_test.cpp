// issue 43 with real Ray: actors whose classes are named as slime's and miles' (a
// `MegatronTrainRayActor` holding 96 MiB, an `SGLangEngine` holding 48 MiB) and a 128 MiB object in
// Ray's object store, from Ray itself (PyPI, the pinned version in the `ray_venv` CTest fixture,
// scripts/setup-ray-venv.sh). The daemon's walk puts each actor in its role under the title Ray
// gives it, Ray's own processes in `ray`, and measures the object store from the raylet's
// /dev/shm mapping. Ray is started by the script's ray.init() and shut down by it (never
// `ray stop`, which would end every Ray process on the host).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backend/agent/role_memory.h"
#include "tests/agent/titled_process.h"

namespace runplane::agent {
namespace {

using namespace testing;

std::string rayVenv() {
    const char* v = std::getenv("RUNPLANE_RAY_VENV");
    if (v != nullptr && *v != '\0') {
        return v;
    }
    const char* b = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(b != nullptr ? b : ".") + "/ray-venv";
}

long jsonInt(const std::string& text, const std::string& key) {
    const auto at = text.find("\"" + key + "\":");
    return at == std::string::npos ? -1 : std::stol(text.substr(at + key.size() + 3));
}

TEST(RayRoles, FrameworkNamedActorsAndTheObjectStoreAreAttributed) {
    const std::string python = rayVenv() + "/bin/python";
    ASSERT_TRUE(std::filesystem::exists(python)) << python << " (scripts/setup-ray-venv.sh)";
    TempDir dir;
    const std::string out = dir.path() + "/pids.json", done = dir.path() + "/done";
    const std::string script = runplane::testing::sourceDir() + "/tests/agent/ray_roles.py";
    // RAY_AUTH_MODE set: Ray 2.60's local `ray.init()` would otherwise write ~/.ray/auth_token,
    // which turns on token authentication for every later `ray start --head` in this home.
    Group ray("RAY_AUTH_MODE=disabled exec " + python + " " + script + " " + out + " " + done +
              " 96 48 128 > " + dir.path() + "/ray.log 2>&1");
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out); }, std::chrono::seconds(120)))
        << slurp(dir.path() + "/ray.log");
    const std::string text = slurp(out);
    const pid_t trainer = static_cast<pid_t>(jsonInt(text, "trainer"));
    const pid_t rollout = static_cast<pid_t>(jsonInt(text, "rollout"));
    const pid_t driver = static_cast<pid_t>(jsonInt(text, "driver"));
    ASSERT_GT(trainer, 0) << text;
    ASSERT_GT(rollout, 0) << text;

    RoleMemory rm(RoleTable::builtin());
    const RoleMemorySample s = rm.sample({driver});
    const RoleTable& t = rm.table();
    auto role = [&](pid_t p) {
        const int r = rm.roleOf(p);
        return r < 0 ? std::string("(none)") : t.roles()[static_cast<std::size_t>(r)];
    };
    EXPECT_EQ(titleOfPid(trainer), "ray::MegatronTrainRayActor");
    EXPECT_EQ(role(trainer), "trainer");
    EXPECT_EQ(titleOfPid(rollout), "ray::SGLangEngine");
    EXPECT_EQ(role(rollout), "rollout");
    EXPECT_EQ(role(driver), "driver");
    EXPECT_EQ(rm.engineOf(rollout), rollout);
    // Ray's own processes, children of this driver: raylet, GCS, agents, idle workers.
    std::size_t rayProcesses = 0;
    for (pid_t p : childrenOf(driver)) {
        const std::string comm = slurp("/proc/" + std::to_string(p) + "/comm");
        if (comm == "raylet\n" || comm == "gcs_server\n") {
            EXPECT_EQ(role(p), "ray") << comm;
            ++rayProcesses;
        }
    }
    EXPECT_EQ(rayProcesses, 2u);
    const auto& tr = s.roles[static_cast<std::size_t>(t.roleIndex("trainer"))];
    const auto& ro = s.roles[static_cast<std::size_t>(t.roleIndex("rollout"))];
    const auto& ry = s.roles[static_cast<std::size_t>(t.roleIndex("ray"))];
    const std::uint64_t mib = 1 << 20;
    EXPECT_GE(tr.rssBytes, 96 * mib);
    EXPECT_GE(ro.rssBytes, 48 * mib);
    EXPECT_GE(rssOf(trainer), 96 * mib);
    EXPECT_LT(rssOf(trainer), (96 + 400) * mib) << "a Ray worker is a few hundred MiB at most";
    // The object store: the 128 MiB object, written by the driver, counted once from the
    // raylet's /dev/shm mapping (the raylet's own RssShmem would show only the pages it touched).
    ASSERT_EQ(ry.objectStoreProcesses, 1u);
    EXPECT_GE(ry.objectStoreBytes, 128 * mib);
    EXPECT_LT(ry.objectStoreBytes, (128 + 64) * mib);
    RecordProperty("object_store_bytes", std::to_string(ry.objectStoreBytes));
    RecordProperty("ray_processes", std::to_string(ry.processes));

    std::ofstream(done).close();
    waitFor([&] { return ::kill(ray.pid(), 0) != 0 || ::waitpid(ray.pid(), nullptr, WNOHANG) > 0; },
            std::chrono::seconds(30));
}

}  // namespace
}  // namespace runplane::agent
