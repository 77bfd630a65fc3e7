#pragma once
// The rule cases shared by the planner tests: rules_test.cpp's coverage check counts the
// framework-argument rules' cases (framework_rules_test.cpp) and the config.json rules, which
// are tested there with temporary checkpoint directories.

#include <string>
#include <vector>

namespace runplane::plan::test {

/// Ids of the rules framework_rules_test.cpp gives a failing and a near-miss case.
std::vector<std::string> frameworkRuleIds();

}  // namespace runplane::plan::test
