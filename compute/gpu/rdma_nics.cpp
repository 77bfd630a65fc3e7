// RDMA NIC ports from sysfs, for the multi-node bandwidth expectation (docs/nccl-health.md).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "compute/gpu/nccl_verdict.h"

namespace runplane::compute {
namespace {

std::string readFirstLine(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

std::vector<NcclNic> scanRdmaNics(const std::string& sysfsRoot) {
    namespace fs = std::filesystem;
    std::vector<NcclNic> nics;
    std::error_code ec;
    for (fs::directory_iterator dev(sysfsRoot, ec), end; !ec && dev != end; dev.increment(ec)) {
        std::error_code portEc;
        for (fs::directory_iterator port(dev->path() / "ports", portEc), portEnd;
             !portEc && port != portEnd; port.increment(portEc)) {
            NcclNic nic;
            nic.name = dev->path().filename().string() + "/" + port->path().filename().string();
            nic.linkLayer = readFirstLine(port->path() / "link_layer");
            // "4: ACTIVE"; "400 Gb/sec (4X NDR)"
            nic.active = readFirstLine(port->path() / "state").find("ACTIVE") != std::string::npos;
            nic.rateGbps = std::strtod(readFirstLine(port->path() / "rate").c_str(), nullptr);
            nics.push_back(nic);
        }
    }
    std::sort(nics.begin(), nics.end(),
              [](const NcclNic& a, const NcclNic& b) { return a.name < b.name; });
    return nics;
}

}  // namespace runplane::compute
