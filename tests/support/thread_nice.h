#pragma once
// tests/support: the nice value of one of this process's threads, found by its name, as the
// kernel reports it (/proc/self/task/TID/stat, field 19): what common/thread_role.h set.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace runplane::testing {

/// The nice value of this process's thread named `name`; -100 if there is none.
inline int niceOfThreadNamed(const std::string& name) {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream comm(task.path() / "comm");
        std::string taskName;
        std::getline(comm, taskName);
        if (taskName != name) {
            continue;
        }
        std::ifstream statFile(task.path() / "stat");
        const std::string stat((std::istreambuf_iterator<char>(statFile)), {});
        std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // from field 3 on
        std::string field;
        for (int i = 3; i <= 19 && fields >> field; ++i) {
        }
        return std::stoi(field);
    }
    return -100;
}

}  // namespace runplane::testing
