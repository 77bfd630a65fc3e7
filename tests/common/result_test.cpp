// Result, Status and Error (common/result.h): an error's code travels with it when it is passed
// on, so callers branch on the code and never on the sentence (issue #22).
#include <gtest/gtest.h>

#include <string>

#include "common/result.h"

namespace runplane {
namespace {

Result<int> lookUp(bool found) {
    if (!found) {
        return Error{"run_id 'r1': no such run on this node", ErrorCode::NotFound};
    }
    return 7;
}

Status passOn(bool found) {
    auto r = lookUp(found);
    if (!r.ok()) {
        return r.failure();  // sentence and code together
    }
    return {};
}

TEST(Result, ValueOrErrorWithItsCode) {
    const Result<int> good = lookUp(true);
    ASSERT_TRUE(good.ok());
    EXPECT_EQ(*good, 7);
    const Result<int> bad = lookUp(false);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), "run_id 'r1': no such run on this node");
    EXPECT_EQ(bad.code(), ErrorCode::NotFound);
}

TEST(Result, FailurePassesTheCodeOn) {
    const Status s = passOn(false);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), ErrorCode::NotFound);
    EXPECT_EQ(s.error(), "run_id 'r1': no such run on this node");
    const Result<std::string> again = s.failure();
    EXPECT_EQ(again.code(), ErrorCode::NotFound);
    EXPECT_TRUE(passOn(true).ok());
}

TEST(Result, ASentenceAloneIsUnspecified) {
    const Status s = Error{"something went wrong"};
    EXPECT_EQ(s.code(), ErrorCode::Unspecified);
    EXPECT_STREQ(toString(s.code()), "unspecified");
    EXPECT_STREQ(toString(ErrorCode::Busy), "busy");
    EXPECT_STREQ(toString(ErrorCode::Unauthenticated), "unauthenticated");
}

}  // namespace
}  // namespace runplane
