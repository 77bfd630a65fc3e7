// NCCL version codes and the version gate.
#include <gtest/gtest.h>

#include "compute/gpu/nccl_gate.h"
#include "compute/gpu/nccl_resolve.h"

namespace runplane::compute {
namespace {

TEST(NcclVersion, ParsesDottedVersions) {
    EXPECT_EQ(parseNcclVersionCode("2.28.3"), 22803);
    EXPECT_EQ(parseNcclVersionCode("2.28.9"), 22809);
    EXPECT_EQ(parseNcclVersionCode("2.30.7"), 23007);
    EXPECT_EQ(parseNcclVersionCode("2.9.0"), 20900);
    EXPECT_EQ(parseNcclVersionCode("2.8.4"), 2804);  // pre-2.9 encoding
    EXPECT_EQ(parseNcclVersionCode("3.0.1"), 30001);
}

TEST(NcclVersion, RejectsNonVersions) {
    for (const char* bad : {"", "2", "2.28", "2.28.", "2.28.3.1", "v2.28.3", "2.x.3", "2.28.100",
                            "2.128.1", "2.28.3 ", "-2.28.3", "0.1.2", "2..3"}) {
        EXPECT_EQ(parseNcclVersionCode(bad), 0) << bad;
    }
}

TEST(NcclVersion, FormatsCodes) {
    EXPECT_EQ(formatNcclVersion(22803), "2.28.3");
    EXPECT_EQ(formatNcclVersion(23007), "2.30.7");
    EXPECT_EQ(formatNcclVersion(20900), "2.9.0");
    EXPECT_EQ(formatNcclVersion(2804), "2.8.4");
    EXPECT_EQ(formatNcclVersion(0), "");
    EXPECT_EQ(formatNcclVersion(-1), "");
    for (const char* text : {"2.28.3", "2.30.7", "2.8.4", "2.21.5", "3.1.0"}) {
        EXPECT_EQ(formatNcclVersion(parseNcclVersionCode(text)), text);
    }
}

TEST(NcclVersion, SourceSpellingsMatchTheProtocol) {
    EXPECT_EQ(toString(NcclSource::LdPreload), "LD_PRELOAD");
    EXPECT_EQ(toString(NcclSource::SglangNcclSoPath), "SGLANG_NCCL_SO_PATH");
    EXPECT_EQ(toString(NcclSource::PythonSitePackages), "PYTHON_SITE_PACKAGES");
    EXPECT_EQ(toString(NcclSource::LdLibraryPath), "LD_LIBRARY_PATH");
    EXPECT_EQ(toString(NcclSource::System), "SYSTEM");
    EXPECT_EQ(toString(NcclSource::CudaToolkit), "CUDA_TOOLKIT");
}

NcclLibraryInfo lib(std::string path, NcclSource source, int code, bool selected = false,
                    std::string error = {}) {
    NcclLibraryInfo info;
    info.path = std::move(path);
    info.source = source;
    info.versionCode = error.empty() ? code : 0;
    info.version = error.empty() ? formatNcclVersion(code) : "";
    info.error = std::move(error);
    info.selected = selected;
    return info;
}

// The GPU host's real case: torch's pip NCCL 2.28.9 wins over the system 2.28.3; both too old.
TEST(NcclGate, FailsTheGpuHostCase) {  // issue 7
    const std::vector<NcclLibraryInfo> libraries = {
        lib("/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
            NcclSource::PythonSitePackages, 22809, true),
        lib("/usr/lib/x86_64-linux-gnu/libnccl.so.2", NcclSource::System, 22803)};
    const NcclGateResult gate = checkNcclRequirement(libraries, kNcclMinVersionCrossNodeCudaGraph);
    EXPECT_FALSE(gate.pass);
    EXPECT_NE(gate.message.find("NCCL 2.28.9 at /opt/torch/.venv"), std::string::npos)
        << gate.message;
    EXPECT_NE(gate.message.find("older than the required 2.30.7"), std::string::npos);
    EXPECT_NE(gate.message.find("/usr/lib/x86_64-linux-gnu/libnccl.so.2 (SYSTEM, NCCL 2.28.3)"),
              std::string::npos)
        << gate.message;
    EXPECT_NE(gate.message.find("pip install nvidia-nccl-cu13==2.30.7"), std::string::npos);
}

TEST(NcclGate, PassesWhenTheSelectedCopyIsNewEnough) {
    const std::vector<NcclLibraryInfo> libraries = {
        lib("/venv/nccl-2.30.7/libnccl.so.2", NcclSource::LdPreload, 23007, true),
        lib("/usr/lib/x86_64-linux-gnu/libnccl.so.2", NcclSource::System, 22803)};
    const NcclGateResult gate = checkNcclRequirement(libraries, 23007);
    EXPECT_TRUE(gate.pass) << gate.message;
    EXPECT_NE(gate.message.find("NCCL 2.30.7 at /venv/nccl-2.30.7/libnccl.so.2 (LD_PRELOAD)"),
              std::string::npos)
        << gate.message;
}

TEST(NcclGate, PointsAtANewerCopyWhenOneExists) {
    const std::vector<NcclLibraryInfo> libraries = {
        lib("/venv/site-packages/nvidia/nccl/lib/libnccl.so.2", NcclSource::PythonSitePackages,
            22809, true),
        lib("/opt/nccl-2.30.7/libnccl.so.2", NcclSource::LdLibraryPath, 23007)};
    const NcclGateResult gate = checkNcclRequirement(libraries, 23007);
    EXPECT_FALSE(gate.pass);
    EXPECT_NE(gate.message.find(
                  "point LD_PRELOAD and SGLANG_NCCL_SO_PATH at /opt/nccl-2.30.7/libnccl.so.2"),
              std::string::npos)
        << gate.message;
}

TEST(NcclGate, ChecksSglangsOwnCopyToo) {
    // LD_PRELOAD wins for torch, but SGLang's pynccl dlopens SGLANG_NCCL_SO_PATH by path.
    const std::vector<NcclLibraryInfo> libraries = {
        lib("/new/libnccl.so.2", NcclSource::LdPreload, 23007, true),
        lib("/old/libnccl.so.2", NcclSource::SglangNcclSoPath, 22809)};
    const NcclGateResult gate = checkNcclRequirement(libraries, 23007);
    EXPECT_FALSE(gate.pass);
    EXPECT_NE(gate.message.find("NCCL 2.28.9 at /old/libnccl.so.2 (SGLANG_NCCL_SO_PATH"),
              std::string::npos)
        << gate.message;

    const std::vector<NcclLibraryInfo> broken = {
        lib("/new/libnccl.so.2", NcclSource::LdPreload, 23007, true),
        lib("/missing/libnccl.so.2", NcclSource::SglangNcclSoPath, 0, false,
            "no such file: /missing/libnccl.so.2")};
    const NcclGateResult brokenGate = checkNcclRequirement(broken, 23007);
    EXPECT_FALSE(brokenGate.pass);
    EXPECT_NE(brokenGate.message.find("SGLANG_NCCL_SO_PATH=/missing/libnccl.so.2 cannot be loaded"),
              std::string::npos)
        << brokenGate.message;
}

TEST(NcclGate, FailsWhenNothingIsFoundOrLoads) {
    const NcclGateResult none = checkNcclRequirement({}, 23007);
    EXPECT_FALSE(none.pass);
    EXPECT_NE(none.message.find("no libnccl.so.2 found"), std::string::npos);

    const std::vector<NcclLibraryInfo> unloadable = {
        lib("/x/libnccl.so.2", NcclSource::LdLibraryPath, 0, false, "dlopen failed: bad ELF")};
    const NcclGateResult gate = checkNcclRequirement(unloadable, 23007);
    EXPECT_FALSE(gate.pass);
    EXPECT_NE(gate.message.find("/x/libnccl.so.2 (LD_LIBRARY_PATH, not loadable: dlopen failed"),
              std::string::npos)
        << gate.message;
}

TEST(NcclGate, ExactMinimumPasses) {
    const NcclGateResult gate =
        checkNcclRequirement({lib("/a/libnccl.so.2", NcclSource::System, 23007, true)}, 23007);
    EXPECT_TRUE(gate.pass);
    const NcclGateResult below =
        checkNcclRequirement({lib("/a/libnccl.so.2", NcclSource::System, 23006, true)}, 23007);
    EXPECT_FALSE(below.pass);
}

}  // namespace
}  // namespace runplane::compute
