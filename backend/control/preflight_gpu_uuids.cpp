// gpu.distinct: the same GPU UUID on two preflight rows (preflight_gpu_uuids.h).
#include "backend/control/preflight_gpu_uuids.h"

#include <map>
#include <utility>

#include "backend/control/dispatch.h"

namespace runplane::control {
namespace {

std::string nodeName(const PreflightRow& row) {
    return row.hostname.empty() ? row.address : row.address + " (" + row.hostname + ")";
}

}  // namespace

PreflightCheckInfo gpuDistinctCheck(const std::vector<PreflightRow>& rows) {
    PreflightCheckInfo out{"gpu.distinct", CheckState::Pass, "", ""};
    // uuid -> indices of the rows reporting it (a row counts once per UUID)
    std::map<std::string, std::vector<std::size_t>> owners;
    std::size_t reported = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].reachable || rows[i].gpuUuids.empty()) {
            continue;
        }
        ++reported;
        for (const auto& uuid : rows[i].gpuUuids) {
            auto& who = owners[uuid];
            if (who.empty() || who.back() != i) {
                who.push_back(i);
            }
        }
    }
    if (reported == 0) {
        out.status = CheckState::Skip;
        out.message = "no node reported GPU UUIDs";
        return out;
    }
    // (first row, second row) -> the UUIDs both report, in UUID order
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::string>> shared;
    for (const auto& [uuid, who] : owners) {
        for (std::size_t a = 0; a < who.size(); ++a) {
            for (std::size_t b = a + 1; b < who.size(); ++b) {
                shared[{who[a], who[b]}].push_back(uuid);
            }
        }
    }
    if (shared.empty()) {
        out.message = std::to_string(owners.size()) + " distinct GPUs on " +
                      std::to_string(reported) + " nodes";
        return out;
    }
    out.status = CheckState::Fail;
    for (const auto& [pair, uuids] : shared) {
        const PreflightRow& a = rows[pair.first];
        const PreflightRow& b = rows[pair.second];
        std::string list;
        for (const auto& u : uuids) {
            list += (list.empty() ? "" : ", ") + u;
        }
        out.message +=
            std::string(out.message.empty() ? "" : "; ") +
            (a.address == b.address
                 ? nodeName(a) + " is listed twice"
                 : nodeName(a) + " and " + nodeName(b) + " report the same GPU" +
                       (uuids.size() > 1 ? "s " : " ") + list + ": one machine joined twice");
    }
    out.detail =
        "two daemons run on one host (or one daemon is listed under two addresses): run one "
        "runplaned per machine and list each machine once";
    return out;
}

}  // namespace runplane::control
