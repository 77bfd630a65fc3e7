// The last output per role (issue #44, docs/diagnosis.md "Last output per role"): Ray's line
// prefixes, the times lines carry, each role's last line. The lines are real: slime's log of
// THUDM/slime#1305 and #1845 and open-r1#249's torchrun lines (tests/agent/fixtures/logs/).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "backend/diagnosis/diagnosis.h"
#include "backend/diagnosis/last_output.h"

using namespace runplane::diagnosis;

namespace {

std::vector<std::string> fixtureLines(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src ? src : ".") + "/tests/agent/fixtures/logs/" + name);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] != '#') {
            out.push_back(line);
        }
    }
    return out;
}

std::int64_t localNs(int y, int mo, int d, int h, int mi, int s) {
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = -1;
    return static_cast<std::int64_t>(std::mktime(&tm)) * 1000000000LL;
}

// slime's actors as the built-in role table reads their titles (docs/daemon.md).
std::string slimeRole(const LinePrefix& p) {
    if (p.actor == "MegatronTrainRayActor")
        return "trainer";
    if (p.actor == "SGLangEngine")
        return "rollout";
    if (p.actor == "raylet")
        return "ray";
    return {};
}

}  // namespace

TEST(LastOutput, RayAndTorchrunPrefixes) {
    const auto slime = fixtureLines("slime_memory_timer_1305.log");
    ASSERT_GE(slime.size(), 12u);
    LinePrefix p = linePrefix(slime[0]);
    EXPECT_EQ(p.actor, "MegatronTrainRayActor");
    EXPECT_EQ(p.pid, 135986);
    p = linePrefix(slime.back());
    EXPECT_EQ(p.actor, "SGLangEngine");
    EXPECT_EQ(p.pid, 132424);
    const auto raylet = fixtureLines("slime_ray_oom_raylet_1845.log");
    ASSERT_FALSE(raylet.empty());
    p = linePrefix(raylet[0]);  // (raylet, ip=10.22.72.139) [2026-04-17 15:06:03,782 E 622 622]
    EXPECT_EQ(p.actor, "raylet");
    EXPECT_EQ(p.ip, "10.22.72.139");
    EXPECT_EQ(p.pid, -1);
    const auto torchrun = fixtureLines("batch_mismatch_grpo_open_r1_249.log");
    ASSERT_FALSE(torchrun.empty());
    p = linePrefix(torchrun[0]);  // [rank1]: Traceback (most recent call last):
    EXPECT_EQ(p.rank, 1);
    EXPECT_TRUE(p.actor.empty());
    // Not a Ray prefix: text in parentheses.
    EXPECT_TRUE(linePrefix("(see the docs) for more").actor.empty());
    EXPECT_TRUE(linePrefix("plain line").actor.empty());
}

TEST(LastOutput, TheTimeALineCarries) {
    const auto slime = fixtureLines("slime_memory_timer_1305.log");
    EXPECT_EQ(lineTimeUnixNs(slime[0]), localNs(2026, 1, 2, 15, 29, 24));  // [2026-01-02 15:29:24]
    EXPECT_EQ(lineTimeUnixNs(slime[4]), localNs(2026, 1, 2, 15, 29, 24));  // [... TP6]
    const auto raylet = fixtureLines("slime_ray_oom_raylet_1845.log");
    EXPECT_EQ(lineTimeUnixNs(raylet[0]), localNs(2026, 4, 17, 15, 6, 3));  // ,782 dropped
    EXPECT_EQ(lineTimeUnixNs("[rank1]: Traceback (most recent call last):"), 0);
    EXPECT_EQ(lineTimeUnixNs("2026-13-02 10:00:00 not a month"), 0);
}

TEST(LastOutput, EachRolesLastLineWithItsAge) {
    StreamTail out{"stdout", fixtureLines("slime_memory_timer_1305.log"), 0};
    // The stream's last write: 14 min after the lines' time (the engines went quiet too).
    const std::int64_t t = localNs(2026, 1, 2, 15, 29, 24);
    out.lastWriteUnixNs = t + 1'000'000'000LL;
    StreamTail err{"stderr", {"driver: waiting"}, t + 2'000'000'000LL};
    const auto roles = lastOutputPerRole({out, err}, slimeRole);
    ASSERT_EQ(roles.size(), 3u);
    EXPECT_EQ(roles[0].role, "trainer");
    EXPECT_EQ(roles[0].source, "MegatronTrainRayActor pid 135986");
    EXPECT_NE(roles[0].line.find("Memory-Usage before update_weights"), std::string::npos);
    EXPECT_EQ(roles[0].tUnixNs, t);
    EXPECT_EQ(roles[0].timeFrom, "line");
    EXPECT_EQ(roles[1].role, "rollout");
    EXPECT_NE(roles[1].line.find("GET /flush_cache"), std::string::npos);
    EXPECT_EQ(roles[1].timeFrom, "line");
    EXPECT_EQ(roles[2].role, "driver");
    EXPECT_EQ(roles[2].source, "the run's own output");
    EXPECT_EQ(roles[2].timeFrom, "stream");
    EXPECT_EQ(roles[2].tUnixNs, t + 2'000'000'000LL);

    const std::string text = lastOutputText(roles, t + 14 * 60'000'000'000LL);
    EXPECT_NE(text.find("trainer: `(MegatronTrainRayActor pid=135986) [2026-01-02 15:29:24] "
                        "memory_utils.py:41 -...` 14 min ago"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("; driver: `driver: waiting` 13 min ago"), std::string::npos) << text;

    // A line without a time after one with it: at most that long ago.
    StreamTail mixed{
        "stdout", {out.lines[0], "(MegatronTrainRayActor pid=135986) no time", "x"}, 0};
    const auto m = lastOutputPerRole({mixed}, slimeRole);
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[0].line, "(MegatronTrainRayActor pid=135986) no time");
    EXPECT_EQ(m[0].timeFrom, "earlier_line");
    EXPECT_EQ(m[0].tUnixNs, t);
    EXPECT_NE(lastOutputText(m, t + 5'000'000'000LL).find("no time` at most 5 s ago"),
              std::string::npos);
    EXPECT_EQ(m[1].timeFrom, "");  // no time, and the stream's write time is unknown
    EXPECT_NE(lastOutputText(m, t).find("driver: `x` (time unknown)"), std::string::npos);

    // In the verdict: the node's roles as evidence, relative to its collection time.
    NodeDiagnosis n;
    n.hostname = "gpu-a";
    n.tUnixNs = t + 14 * 60'000'000'000LL;
    n.roleOutput = roles;
    const Verdict v = judge({n});
    ASSERT_FALSE(v.findings.empty());
    EXPECT_EQ(v.findings.back().kind, "last_output");
    EXPECT_EQ(v.findings.back().text.rfind("last output on gpu-a: trainer: `", 0), 0u);
    // Stored and read back.
    const auto back = nodeDiagnosisFromJson(toJson(n));
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(back->roleOutput.size(), 3u);
    EXPECT_EQ(back->roleOutput[2].timeFrom, "stream");
    EXPECT_EQ(back->roleOutput[0].line, roles[0].line);
}
