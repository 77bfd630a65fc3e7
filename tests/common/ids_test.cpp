// common/ids.h: a run's id and a node's id are distinct types over the same string.
#include "common/ids.h"

#include <gtest/gtest.h>

#include <map>
#include <type_traits>
#include <unordered_set>

namespace runplane {
namespace {

// Neither converts from a string implicitly, nor one into the other.
static_assert(!std::is_convertible_v<std::string, RunId>);
static_assert(!std::is_convertible_v<const char*, NodeId>);
static_assert(!std::is_convertible_v<RunId, NodeId>);
static_assert(!std::is_constructible_v<NodeId, RunId>);

TEST(Ids, HoldTheirStringAndCompareByIt) {
    const RunId a{"run-a"};
    EXPECT_EQ(a.value(), "run-a");
    EXPECT_EQ(a, RunId{std::string("run-a")});
    EXPECT_NE(a, RunId{"run-b"});
    EXPECT_LT(a, RunId{"run-b"});
    EXPECT_TRUE(NodeId{}.empty());
    EXPECT_FALSE(a.empty());
}

TEST(Ids, KeyOrderedAndHashedContainers) {
    std::map<NodeId, int> byNode{{NodeId{"b"}, 2}, {NodeId{"a"}, 1}};
    EXPECT_EQ(byNode.begin()->first.value(), "a");
    std::unordered_set<RunId> runs{RunId{"x"}, RunId{"x"}, RunId{"y"}};
    EXPECT_EQ(runs.size(), 2u);
}

}  // namespace
}  // namespace runplane
