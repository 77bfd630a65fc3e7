// issue 47: NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME read as NCCL reads them -- prefixes, `=` exact
// names, and `^` exclusions (every other interface is selected) -- and the row says which of the
// node's interfaces (a folder standing for /sys/class/net) the value selects.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "backend/agent/preflight.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

const v1::PreflightCheck* ifnameRow(const v1::PreflightReport& r) {
    for (const auto& c : r.checks()) {
        if (c.id() == "net.ifname") {
            return &c;
        }
    }
    return nullptr;
}

TEST(PreflightIfname, ExclusionsPrefixesAndExactNamesSayWhichInterfacesAreSelected) {
    testing::TempDir dir;
    for (const char* n : {"eth0", "eth1", "ib0", "lo"}) {
        std::filesystem::create_directories(dir.path() + "/net/" + n);
    }
    PreflightEnvironment env;
    env.hostname = "node-1";
    env.hostsFile = dir.path() + "/hosts";
    env.netClassDir = dir.path() + "/net";
    struct Row {
        const char* value;
        v1::CheckStatus status;
        const char* says;
    };
    const Row rows[] = {
        {"^lo", v1::CHECK_PASS, "selects eth0 eth1 ib0"},
        {"^docker,lo", v1::CHECK_PASS, "selects eth0 eth1 ib0"},  // NCCL's own default
        {"^eth,ib", v1::CHECK_WARN, "leaves only lo"},
        {"^eth,ib,lo", v1::CHECK_FAIL, "excludes every interface"},
        {"^=eth", v1::CHECK_PASS, "selects eth0 eth1 ib0 lo"},  // exact: no name is "eth"
        {"^=eth0", v1::CHECK_PASS, "selects eth1 ib0 lo"},
        {"eth", v1::CHECK_PASS, "selects eth0 eth1"},
        {"=eth1", v1::CHECK_PASS, "selects eth1"},
        {"=eth", v1::CHECK_FAIL, "no interface matches eth"},
        {"ens", v1::CHECK_FAIL, "no interface matches ens"},
        // A list for several kinds of node: NCCL takes what matches, fails only on nothing.
        {"ens,eth", v1::CHECK_PASS, "selects eth0 eth1 on this node (ens matches nothing here)"},
        {"ens,=ib", v1::CHECK_FAIL, "no interface matches ens, =ib"},
    };
    for (const auto& row : rows) {
        v1::PreflightRequest req;
        req.set_multi_node(true);
        (*req.mutable_env())["NCCL_SOCKET_IFNAME"] = row.value;
        const auto r = runPreflight(req, env);
        const auto* c = ifnameRow(r);
        ASSERT_NE(c, nullptr) << row.value;
        EXPECT_EQ(c->status(), row.status) << row.value << ": " << c->message();
        EXPECT_NE(c->message().find(row.says), std::string::npos)
            << row.value << ": " << c->message();
    }
}

}  // namespace
}  // namespace runplane::agent
