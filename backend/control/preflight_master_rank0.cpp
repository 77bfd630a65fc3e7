// net.master_addr.rank0: MASTER_ADDR resolves to an address of the rank-0 node
// (preflight_master_rank0.h).
#include "backend/control/preflight_master_rank0.h"

#include <algorithm>
#include <charconv>

#include "backend/control/dispatch.h"

namespace runplane::control {
namespace {

std::string joinList(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) {
        out += (out.empty() ? "" : ", ") + x;
    }
    return out;
}

std::string rowName(const PreflightRow& row) {
    return row.address + (row.hostname.empty() ? "" : " (" + row.hostname + ")");
}

}  // namespace

std::uint32_t daemonPortOf(const std::string& address) {
    const auto colon = address.rfind(':');
    const auto bracket = address.rfind(']');
    if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket)) {
        return 0;
    }
    std::uint32_t port = 0;
    const char* begin = address.data() + colon + 1;
    const char* end = address.data() + address.size();
    const auto [p, ec] = std::from_chars(begin, end, port);
    return ec == std::errc() && p == end && port <= 65535 ? port : 0;
}

PreflightCheckInfo masterAddrRank0Check(const std::vector<PreflightRow>& rows) {
    PreflightCheckInfo out{"net.master_addr.rank0", CheckState::Skip, "", ""};
    if (rows.empty() || !rows[0].reachable || rows[0].addresses.empty()) {
        out.message = "the rank-0 node reported no addresses";
        return out;
    }
    const PreflightRow& rank0 = rows[0];
    std::vector<std::string> wrong;
    std::vector<std::string> matched;
    for (const auto& row : rows) {
        if (!row.reachable || row.masterAddrResolved.empty()) {
            continue;
        }
        bool found = false;
        for (const auto& a : row.masterAddrResolved) {
            if (std::find(rank0.addresses.begin(), rank0.addresses.end(), a) !=
                rank0.addresses.end()) {
                found = true;
                if (std::find(matched.begin(), matched.end(), a) == matched.end()) {
                    matched.push_back(a);
                }
            }
        }
        if (!found) {
            wrong.push_back(rowName(row) + " -> " + joinList(row.masterAddrResolved));
        }
    }
    if (wrong.empty() && matched.empty()) {
        out.message = "no node resolved MASTER_ADDR";
        return out;
    }
    std::vector<std::string> shown;  // rank 0's addresses other than loopback
    for (const auto& a : rank0.addresses) {
        if (a.rfind("127.", 0) != 0 && a != "::1") {
            shown.push_back(a);
        }
    }
    if (!wrong.empty()) {
        out.status = CheckState::Fail;
        out.message = "MASTER_ADDR is not an address of the rank-0 node " + rowName(rank0) +
                      " (its addresses: " + joinList(shown) + ") as resolved on " + joinList(wrong);
        out.detail =
            "set MASTER_ADDR to the rank-0 (head) node's LAN address; a name must "
            "resolve to it on every node";
        return out;
    }
    out.status = CheckState::Pass;
    out.message = "MASTER_ADDR resolves to " + joinList(matched) +
                  ", an address of the rank-0 node " + rowName(rank0) +
                  ", on every node that answered";
    return out;
}

}  // namespace runplane::control
