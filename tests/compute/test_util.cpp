#include "tests/compute/test_util.h"

#include <unistd.h>

#include <fstream>
#include <random>
#include <stdexcept>

namespace runplane::compute::test {

ScratchDir::ScratchDir() {
    std::random_device random;
    m_path =
        std::filesystem::temp_directory_path() /
        ("runplane-compute-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
    std::filesystem::create_directories(m_path);
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

void writeFile(const std::filesystem::path& path, const std::string& text, bool executable) {
    std::filesystem::create_directories(path.parent_path());
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error("cannot write " + path.string());
        out << text;
    }
    if (executable) {
        std::filesystem::permissions(path, std::filesystem::perms::owner_exec,
                                     std::filesystem::perm_options::add);
    }
}

std::string fakeNccl(const std::string& dir) {
    return std::string(FAKE_NCCL_ROOT) + "/" + dir + "/libnccl.so.2";
}

}  // namespace runplane::compute::test
