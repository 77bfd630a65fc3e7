// Resolution order over a fake tree of real shared libraries (tests/compute/fake_nccl.cpp), each
// loaded by the real runplane-nccl-version helper process.
#include <gtest/gtest.h>

#include "compute/gpu/nccl_resolve.h"
#include "tests/compute/test_util.h"

namespace runplane::compute {
namespace {

using test::fakeNccl;

std::string root() {
    return FAKE_NCCL_ROOT;
}

// A config that sees only the fake tree: no real ldconfig, system or CUDA directories.
NcclResolveConfig isolatedConfig() {
    NcclResolveConfig config;
    config.versionHelperPath = COMPUTE_VERSION_HELPER;
    config.ldconfigCommand = "true";
    config.systemDirs = {root() + "/system"};
    config.cudaToolkitDirs = {root() + "/cuda/lib64"};
    return config;
}

const NcclLibraryInfo* selectedOf(const std::vector<NcclLibraryInfo>& libraries) {
    const NcclLibraryInfo* selected = nullptr;
    for (const auto& info : libraries) {
        if (info.selected) {
            EXPECT_EQ(selected, nullptr) << "more than one selected";
            selected = &info;
        }
    }
    return selected;
}

std::string dump(const std::vector<NcclLibraryInfo>& libraries) {
    std::string text;
    for (const auto& info : libraries) {
        text += std::string(toString(info.source)) + " " + info.path + " " + info.version + " " +
                info.error + (info.selected ? " [selected]" : "") + "\n";
    }
    return text;
}

TEST(NcclResolve, FollowsLoaderOrderAndLoadsEveryCopy) {
    NcclResolveConfig config = isolatedConfig();
    config.env = {{"LD_PRELOAD", "/lib/libfoo.so " + fakeNccl("preload")},
                  {"SGLANG_NCCL_SO_PATH", fakeNccl("sglang")},
                  {"VIRTUAL_ENV", root() + "/venv"},
                  {"LD_LIBRARY_PATH", "/nonexistent:" + root() + "/ldpath"}};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_EQ(libraries.size(), 6u) << dump(libraries);
    const std::vector<std::pair<NcclSource, int>> expected = {
        {NcclSource::LdPreload, 23007},
        {NcclSource::SglangNcclSoPath, 22809},
        {NcclSource::PythonSitePackages, 22809},
        {NcclSource::LdLibraryPath, 22803},
        {NcclSource::System, 22803},
        {NcclSource::CudaToolkit, 22700}};
    for (std::size_t k = 0; k < expected.size(); ++k) {
        EXPECT_EQ(libraries[k].source, expected[k].first) << dump(libraries);
        EXPECT_EQ(libraries[k].versionCode, expected[k].second) << dump(libraries);
        EXPECT_EQ(libraries[k].version, formatNcclVersion(expected[k].second));
        EXPECT_TRUE(libraries[k].error.empty()) << libraries[k].error;
    }
    EXPECT_EQ(libraries[2].path,
              root() + "/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
    const NcclLibraryInfo* selected = selectedOf(libraries);
    ASSERT_NE(selected, nullptr);
    EXPECT_EQ(selected->path, fakeNccl("preload"));
}

TEST(NcclResolve, WithoutPreloadTheNextSourceWins) {
    NcclResolveConfig config = isolatedConfig();
    config.env = {{"VIRTUAL_ENV", root() + "/venv"}, {"LD_LIBRARY_PATH", root() + "/ldpath"}};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_EQ(libraries.size(), 4u) << dump(libraries);
    const NcclLibraryInfo* selected = selectedOf(libraries);
    ASSERT_NE(selected, nullptr);
    EXPECT_EQ(selected->source, NcclSource::PythonSitePackages);
    EXPECT_EQ(selected->versionCode, 22809);
}

TEST(NcclResolve, AsksTheRunsPythonForItsSysPath) {
    test::ScratchDir scratch;
    const auto python = scratch.path() / "python3";
    // Prints sys.path like the real interpreter would (one entry per line).
    test::writeFile(
        python,
        "#!/bin/sh\necho /nonexistent/lib\necho " + root() + "/venv/lib/python3.11/site-packages\n",
        true);
    NcclResolveConfig config = isolatedConfig();
    config.python = python.string();
    config.cudaToolkitDirs = {"/nonexistent"};
    config.systemDirs = {"/nonexistent"};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_EQ(libraries.size(), 1u) << dump(libraries);
    EXPECT_EQ(libraries[0].source, NcclSource::PythonSitePackages);
    EXPECT_TRUE(libraries[0].selected);

    // Found on the run's PATH when no interpreter is named.
    NcclResolveConfig viaPath = config;
    viaPath.python.clear();
    viaPath.env = {{"PATH", "/nonexistent:" + scratch.path().string()}};
    const auto fromPath = resolveNcclLibraries(viaPath);
    ASSERT_EQ(fromPath.size(), 1u) << dump(fromPath);
    EXPECT_EQ(fromPath[0].versionCode, 22809);
}

TEST(NcclResolve, RealPythonIsAskedWithoutError) {
    NcclResolveConfig config = isolatedConfig();
    config.python = "python3";  // the build machine's interpreter; it has no nvidia-nccl wheel
    config.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    const auto libraries = resolveNcclLibraries(config);
    for (const auto& info : libraries) {
        if (info.source == NcclSource::PythonSitePackages) {
            EXPECT_TRUE(info.error.empty()) << info.error;
        }
    }
}

TEST(NcclResolve, BrokenPythonIsReportedNotFatal) {
    NcclResolveConfig config = isolatedConfig();
    config.python = "/nonexistent/bin/python3";
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_GE(libraries.size(), 2u) << dump(libraries);
    EXPECT_EQ(libraries[0].source, NcclSource::PythonSitePackages);
    EXPECT_NE(libraries[0].error.find("could not ask the run's python /nonexistent/bin/python3"),
              std::string::npos)
        << libraries[0].error;
    EXPECT_FALSE(libraries[0].selected);
    EXPECT_EQ(selectedOf(libraries)->source, NcclSource::System);
}

TEST(NcclResolve, ParsesTheLoaderCache) {
    test::ScratchDir scratch;
    const auto ldconfig = scratch.path() / "ldconfig";
    test::writeFile(ldconfig,
                    "#!/bin/sh\n"
                    "echo '123 libs found in cache /etc/ld.so.cache'\n"
                    "printf '\\tlibnccl.so.2 (libc6) => /lib32/libnccl.so.2\\n'\n"
                    "printf '\\tlibnccl.so.2 (libc6,x86-64) => " +
                        fakeNccl("system") +
                        "\\n'\n"
                        "printf '\\tlibnccl.so (libc6,x86-64) => /ignored/libnccl.so\\n'\n"
                        "printf '\\tlibnccl_static.so.2 (libc6,x86-64) => /ignored2\\n'\n",
                    true);
    NcclResolveConfig config = isolatedConfig();
    config.ldconfigCommand = ldconfig.string();
    config.systemDirs = {root() + "/system"};  // the same file again: listed once
    config.cudaToolkitDirs = {"/nonexistent"};
    const auto libraries = resolveNcclLibraries(config);
    // "(libc6)" is the 32-bit copy: never loaded by a 64-bit run, so not listed.
    ASSERT_EQ(libraries.size(), 1u) << dump(libraries);
    EXPECT_EQ(libraries[0].path, fakeNccl("system"));
    EXPECT_EQ(libraries[0].source, NcclSource::System);
    EXPECT_TRUE(libraries[0].selected);
}

TEST(NcclResolve, SameFileFromTwoSourcesIsListedOnce) {
    NcclResolveConfig config = isolatedConfig();
    config.env = {{"LD_PRELOAD", fakeNccl("preload")},
                  {"SGLANG_NCCL_SO_PATH", root() + "/preload/../preload/libnccl.so.2"}};
    config.cudaToolkitDirs = {"/nonexistent"};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_EQ(libraries.size(), 2u) << dump(libraries);
    EXPECT_EQ(libraries[0].source, NcclSource::LdPreload);
    EXPECT_EQ(libraries[1].source, NcclSource::System);
}

TEST(NcclResolve, BareLdPreloadNameIsSearchedLikeTheLoaderDoes) {
    NcclResolveConfig config = isolatedConfig();
    config.env = {{"LD_PRELOAD", "libnccl.so.2"}, {"LD_LIBRARY_PATH", root() + "/ldpath"}};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_FALSE(libraries.empty());
    EXPECT_EQ(libraries[0].source, NcclSource::LdPreload);
    EXPECT_EQ(libraries[0].path, fakeNccl("ldpath"));
    EXPECT_TRUE(libraries[0].selected);

    NcclResolveConfig nowhere = isolatedConfig();
    nowhere.systemDirs = {"/nonexistent"};
    nowhere.env = {{"LD_PRELOAD", "libnccl.so.2"}};
    const auto missing = resolveNcclLibraries(nowhere);
    ASSERT_FALSE(missing.empty());
    EXPECT_NE(missing[0].error.find("without a directory"), std::string::npos) << missing[0].error;
}

// Libraries that cannot be loaded or asked get an error; the caller never crashes or hangs.
TEST(NcclResolve, BrokenLibrariesGetErrorsAndAreSkipped) {
    test::ScratchDir scratch;
    const auto notElf = scratch.path() / "libnccl.so.2";
    test::writeFile(notElf, "this is not an ELF file\n");
    NcclResolveConfig config = isolatedConfig();
    config.helperTimeoutSeconds = 2;
    config.env = {
        {"LD_PRELOAD", fakeNccl("nosym") + ":" + fakeNccl("crash") + ":" + fakeNccl("failing") +
                           ":" + notElf.string() + ":" + fakeNccl("hang")},
        {"SGLANG_NCCL_SO_PATH", "/nonexistent/libnccl.so.2"}};
    const auto start = std::chrono::steady_clock::now();
    const auto libraries = resolveNcclLibraries(config);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    ASSERT_EQ(libraries.size(), 8u) << dump(libraries);
    EXPECT_NE(libraries[0].error.find("no ncclGetVersion"), std::string::npos)
        << libraries[0].error;
    EXPECT_NE(libraries[1].error.find("signal 6"), std::string::npos) << libraries[1].error;
    EXPECT_NE(libraries[2].error.find("ncclGetVersion returned error 1"), std::string::npos)
        << libraries[2].error;
    EXPECT_NE(libraries[3].error.find("dlopen failed"), std::string::npos) << libraries[3].error;
    EXPECT_NE(libraries[4].error.find("timed out"), std::string::npos) << libraries[4].error;
    EXPECT_NE(libraries[5].error.find("no such file"), std::string::npos) << libraries[5].error;
    for (int k = 0; k < 6; ++k) {
        EXPECT_FALSE(libraries[static_cast<std::size_t>(k)].selected);
        EXPECT_EQ(libraries[static_cast<std::size_t>(k)].versionCode, 0);
    }
    const NcclLibraryInfo* selected = selectedOf(libraries);
    ASSERT_NE(selected, nullptr);
    EXPECT_EQ(selected->source, NcclSource::System);
}

TEST(NcclResolve, OldEncodingIsFormatted) {
    NcclResolveConfig config = isolatedConfig();
    config.env = {{"LD_LIBRARY_PATH", root() + "/old"}};
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_FALSE(libraries.empty());
    EXPECT_EQ(libraries[0].versionCode, 2804);
    EXPECT_EQ(libraries[0].version, "2.8.4");
}

TEST(NcclResolve, MissingHelperGivesErrorsAndNoSelection) {
    NcclResolveConfig config = isolatedConfig();
    config.versionHelperPath = "/nonexistent/runplane-nccl-version";
    const auto libraries = resolveNcclLibraries(config);
    ASSERT_EQ(libraries.size(), 2u) << dump(libraries);
    for (const auto& info : libraries) {
        EXPECT_FALSE(info.selected);
        EXPECT_NE(info.error.find("/nonexistent/runplane-nccl-version"), std::string::npos)
            << info.error;
    }
}

TEST(NcclResolve, NothingFoundIsAnEmptyList) {
    NcclResolveConfig config = isolatedConfig();
    config.systemDirs = {"/nonexistent"};
    config.cudaToolkitDirs = {"/nonexistent"};
    EXPECT_TRUE(resolveNcclLibraries(config).empty());
}

TEST(NcclResolve, DefaultSearchOnThisMachineNeverCrashes) {
    NcclResolveConfig config;
    config.versionHelperPath = COMPUTE_VERSION_HELPER;
    const auto libraries = resolveNcclLibraries(config);
    int selected = 0;
    for (const auto& info : libraries) {
        selected += info.selected ? 1 : 0;
        if (info.error.empty()) {
            EXPECT_GT(info.versionCode, 0) << info.path;
        }
    }
    EXPECT_LE(selected, 1);
}

}  // namespace
}  // namespace runplane::compute
