// The controller's own event records (dispatch steps, NCCL probe results) hand the history their
// attributes as a map of JSON values (db::EventAttrs); the stored JSON text is byte for byte what
// these records stored when they dumped it themselves (issue #22), and reads back as the values
// they passed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/control/dispatch_history.h"
#include "backend/control/nccl_probe.h"
#include "db/history/history.h"
#include "db/sqlite/sqlite.h"
#include "tests/db/test_util.h"

namespace runplane::control {
namespace {

using runplane::testing::ScratchDir;

// (kind, attrs_json) of every event of the file, by time, then node.
std::vector<std::pair<std::string, std::string>> stored(const std::string& path) {
    std::vector<std::pair<std::string, std::string>> rows;
    auto db = sqlite::Database::open(path);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->prepare("SELECT kind, attrs_json FROM events ORDER BY t_ns, node_id;");
    EXPECT_TRUE(stmt.ok());
    while (true) {
        auto row = stmt->step();
        EXPECT_TRUE(row.ok());
        if (!row.ok() || !*row) {
            break;
        }
        rows.emplace_back(stmt->columnText(0), stmt->columnText(1));
    }
    return rows;
}

TEST(EventAttrsRecord, DispatchStepsStoreOkAsABool) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    StopResult result;
    result.ok = false;
    result.events.push_back({DispatchStep::StopRun, "10.0.0.1:7070", true, true, 1.0, "stopped"});
    result.events.push_back(
        {DispatchStep::RayStop, "10.0.0.2:7070", true, false, 1.0, "unreachable"});
    ASSERT_TRUE(recordStop(path, "run-1", result).ok());
    using Row = std::pair<std::string, std::string>;
    EXPECT_EQ(stored(path),
              (std::vector<Row>{{"dispatch.stop_run", R"({"node":"10.0.0.1:7070","ok":true})"},
                                {"dispatch.ray_stop", R"({"node":"10.0.0.2:7070","ok":false})"}}));
    auto history = db::History::open(path);
    ASSERT_TRUE(history.ok()) << history.error();
    auto events = (*history)->listEvents(db::EventFilter{});
    ASSERT_TRUE(events.ok()) << events.error();
    ASSERT_EQ(events->size(), 2u);
    EXPECT_EQ((*events)[1].attrs, (db::EventAttrs{{"node", "10.0.0.2:7070"}, {"ok", false}}));
}

TEST(EventAttrsRecord, NcclProbeSummaryKeepsNumbersAndNestedObjects) {
    ScratchDir dir;
    const std::string path = dir.file("h.sqlite");
    ClusterProbe probe;
    probe.worldSize = 16;
    NodeProbe node;
    node.address = "10.0.0.2:7070";
    node.nodeId = "node-b";
    node.gpus = 8;
    node.firstRank = 8;
    node.reachable = true;
    node.report.ncclVersion = "2.21.5";
    node.report.ranks = 8;
    node.report.verdict = "healthy";
    node.report.libraryPath = "/usr/lib/libnccl.so.2";
    node.report.ncclEnv = {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_HCA", "mlx5"}};
    node.report.rawJson = R"({"topology": "NV18", "gpus": [{"index": 0, "busbw": 341.5}]})";
    node.report.rows.push_back({"all_reduce", 1073741824, 120.5, 130.25, 180.5, 341.5, true});
    probe.nodes.push_back(node);
    NodeProbe broken = node;  // a report that is not JSON is kept as its text
    broken.address = "10.0.0.3:7070";
    broken.nodeId = "node-c";
    broken.firstRank = 0;
    broken.report.ncclEnv.clear();
    broken.report.rawJson = "not json";
    broken.report.rows.clear();
    probe.nodes.push_back(broken);
    ASSERT_TRUE(recordNcclProbe(path, "run-1", probe).ok());

    using Row = std::pair<std::string, std::string>;
    const std::vector<Row> rows = stored(path);
    ASSERT_EQ(rows.size(), 3u);
    // Keys sorted, numbers as numbers, the environment and the report nested, as before.
    EXPECT_EQ(rows[0], (Row{"nccl_probe",
                            R"({"address":"10.0.0.2:7070","error":"","first_rank":8,)"
                            R"("library":"/usr/lib/libnccl.so.2",)"
                            R"("nccl_env":{"NCCL_DEBUG":"WARN","NCCL_IB_HCA":"mlx5"},)"
                            R"("nccl_version":"2.21.5","ranks":8,)"
                            R"("report":{"gpus":[{"busbw":341.5,"index":0}],"topology":"NV18"},)"
                            R"("world_size":16})"}));
    EXPECT_EQ(rows[1],
              (Row{"nccl_probe", R"({"address":"10.0.0.3:7070","error":"","first_rank":0,)"
                                 R"("library":"/usr/lib/libnccl.so.2","nccl_env":{},)"
                                 R"("nccl_version":"2.21.5","ranks":8,"report":"not json",)"
                                 R"("world_size":16})"}));

    // A measured row (one ns later): strings, as the daemon's event attributes are.
    EXPECT_EQ(rows[2], (Row{"info", R"({"algbw_gbps":"180.500000","busbw_gbps":"341.500000",)"
                                    R"("bytes":"1073741824","collective":"all_reduce",)"
                                    R"("correct":"true","nccl_version":"2.21.5",)"
                                    R"("time_us_p50":"120.500000","time_us_p95":"130.250000"})"}));

    auto history = db::History::open(path);
    ASSERT_TRUE(history.ok()) << history.error();
    db::EventFilter filter;
    filter.kind = "nccl_probe";
    auto events = (*history)->listEvents(filter);
    ASSERT_TRUE(events.ok()) << events.error();
    ASSERT_EQ(events->size(), 2u);
    const bool bFirst = (*events)[0].nodeId.value() == "node-b";
    const db::EventAttrs& attrs = (*events)[bFirst ? 0 : 1].attrs;
    EXPECT_EQ(attrs.at("ranks"), 8);
    EXPECT_EQ(attrs.at("world_size"), 16);
    EXPECT_EQ(attrs.at("nccl_env").at("NCCL_IB_HCA"), "mlx5");
    EXPECT_EQ(attrs.at("report").at("gpus").at(0).at("busbw"), 341.5);
    EXPECT_EQ((*events)[bFirst ? 1 : 0].attrs.at("report"), "not json");
}

}  // namespace
}  // namespace runplane::control
