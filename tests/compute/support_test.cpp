// compute/gpu's child-process runner and minimal JSON text helpers.
#include <gtest/gtest.h>

#include <signal.h>

#include "compute/gpu/json_text.h"
#include "compute/gpu/subprocess.h"

namespace runplane::compute {
namespace {

TEST(Subprocess, CapturesOutputAndExitCode) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 7"};
    const ProcessResult result = runProcess(spec);
    EXPECT_EQ(result.exitCode, 7);
    EXPECT_EQ(result.out, "out\n");
    EXPECT_EQ(result.err, "err\n");
    EXPECT_FALSE(result.succeeded());
    EXPECT_EQ(result.describeEnd(), "exit code 7");
}

TEST(Subprocess, ReportsSignal) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
    const ProcessResult result = runProcess(spec);
    EXPECT_EQ(result.termSignal, SIGSEGV);
    EXPECT_NE(result.describeEnd().find("signal 11"), std::string::npos) << result.describeEnd();
}

TEST(Subprocess, KillsTheWholeGroupAtTimeout) {
    ProcessSpec spec;
    // The grandchild holds the pipe open too: the runner must not wait for it.
    spec.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
    spec.timeout = std::chrono::milliseconds(300);
    const auto start = std::chrono::steady_clock::now();
    const ProcessResult result = runProcess(spec);
    EXPECT_TRUE(result.timedOut);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Subprocess, PassesExactEnvironment) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo \"$ONLY_THIS:${HOME:-unset}\""};
    spec.env = std::vector<std::string>{"ONLY_THIS=yes"};
    const ProcessResult result = runProcess(spec);
    EXPECT_EQ(result.out, "yes:unset\n");
}

TEST(Subprocess, SpawnFailureIsAnErrorNotACrash) {
    ProcessSpec spec;
    spec.argv = {"/nonexistent/runplane-helper"};
    const ProcessResult result = runProcess(spec);
    EXPECT_FALSE(result.spawnError.empty());
    EXPECT_NE(result.spawnError.find("/nonexistent/runplane-helper"), std::string::npos);
}

TEST(Subprocess, SpawnedProcessReadsLinesAndIsKilledOnDestruction) {
    int pid = 0;
    {
        SpawnedProcess process;
        ProcessSpec spec;
        spec.argv = {"/bin/sh", "-c", "echo first; echo second; sleep 30"};
        ASSERT_FALSE(process.start(spec).has_value());
        pid = process.pid();
        EXPECT_EQ(process.readLine(std::chrono::seconds(5)).value_or("?"), "first");
        EXPECT_EQ(process.readLine(std::chrono::seconds(5)).value_or("?"), "second");
        EXPECT_FALSE(process.readLine(std::chrono::milliseconds(100)).has_value());
        EXPECT_EQ(::kill(pid, 0), 0);
    }
    EXPECT_NE(::kill(pid, 0), 0);  // killed and reaped
}

TEST(JsonText, QuotesEscapesAndReplacesInvalidUtf8) {
    EXPECT_EQ(json::quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
    EXPECT_EQ(json::quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
    EXPECT_EQ(json::quote("bad\xff"), "\"bad\\ufffd\"");
    EXPECT_EQ(json::quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");  // overlong '/'
}

TEST(JsonText, ReadsFlatObject) {
    std::map<std::string, json::FlatValue> fields;
    std::string error;
    ASSERT_TRUE(json::parseFlatObject(
        R"( {"path":"/a/\"b\"\u00e9","version_code":22809,"ok":true,"none":null} )", fields, error))
        << error;
    EXPECT_EQ(fields["path"].text, "/a/\"b\"\xc3\xa9");
    EXPECT_EQ(fields["version_code"].kind, json::FlatValue::Kind::Number);
    EXPECT_EQ(fields["version_code"].number, 22809);
    EXPECT_TRUE(fields["ok"].boolean);
    EXPECT_EQ(fields["none"].kind, json::FlatValue::Kind::Null);
}

TEST(JsonText, RejectsNestingAndNamesTheOffset) {
    std::map<std::string, json::FlatValue> fields;
    std::string error;
    EXPECT_FALSE(json::parseFlatObject(R"({"a":[1]})", fields, error));
    EXPECT_EQ(error.rfind("offset 5:", 0), 0u) << error;
    EXPECT_FALSE(json::parseFlatObject(R"({"a":1} x)", fields, error));
    EXPECT_NE(error.find("trailing"), std::string::npos);
    EXPECT_FALSE(json::parseFlatObject("", fields, error));
}

}  // namespace
}  // namespace runplane::compute
