#include "compute/gpu/helper_path.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace runplane::compute {

std::string findHelperExecutable(const std::string& name, const std::string& explicitPath,
                                 std::string* searched) {
    if (!explicitPath.empty()) {
        return explicitPath;
    }
    namespace fs = std::filesystem;
    std::vector<fs::path> dirs;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back(self.parent_path());
        dirs.push_back(self.parent_path() / ".." / ".." / "compute" / "gpu");
    }
    if (const char* binaryDir = std::getenv("RUNPLANE_BINARY_DIR"); binaryDir && *binaryDir) {
        dirs.push_back(fs::path(binaryDir) / "compute" / "gpu");
    }
    std::string looked;
    for (const auto& dir : dirs) {
        const fs::path candidate = (dir / name).lexically_normal();
        if (!looked.empty())
            looked += ", ";
        looked += candidate.string();
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate.string();
        }
    }
    if (searched != nullptr) {
        *searched = looked;
    }
    return {};
}

}  // namespace runplane::compute
