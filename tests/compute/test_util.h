#pragma once
// Shared helpers of the compute tests: scratch directories and executable fake scripts.

#include <filesystem>
#include <string>

namespace runplane::compute::test {

/// A fresh directory under the system temp dir, removed by the destructor.
class ScratchDir {
  public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }

  private:
    std::filesystem::path m_path;
};

/// Writes `text` to `path` (creating parent directories); `executable` adds u+x.
void writeFile(const std::filesystem::path& path, const std::string& text, bool executable = false);

/// The fake libnccl.so.2 built into FAKE_NCCL_ROOT/<dir>.
std::string fakeNccl(const std::string& dir);

}  // namespace runplane::compute::test
