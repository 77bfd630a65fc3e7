// The collector's memory-by-role part (issue 43): one RoleMemory walk per report, sent as
// node-level role.* series, and NVML's per-process GPU memory summed by the same roles. Kept
// apart from collector.cpp, whose loop only calls sampleRoles() and addGpuRoleSamples().
#include <map>

#include "backend/agent/collector.h"
#include "common/telemetry/series.h"

namespace runplane::agent {

namespace series = telemetry::series;

void Collector::trackPhase(RunTrack& run, const std::map<std::string, std::string>& attrs) {
    // As the controller reads phase events (cli::phaseWindowsOf): a timer's end closes its phase;
    // any other phase event (a marker, a timer's start) opens its phase until the next one.
    const auto phase = attrs.find("phase");
    const auto edge = attrs.find("edge");
    const std::string name = phase != attrs.end() ? phase->second : std::string();
    if (edge != attrs.end() && edge->second == "end") {
        if (name == run.phase) {
            run.phase.clear();
        }
        return;
    }
    run.phase = name;
}

void Collector::syncRunRoleRows() {
    // The live runs' rows, in run id order, before the daemon's own (--role-table, built-in).
    std::string rows;
    std::vector<std::pair<std::string, const std::string*>> runs;
    for (const auto& [id, track] : m_tracks) {
        if (!track.ended && track.rolePlan && !track.rolePlan->roleRows.empty()) {
            runs.emplace_back(id, &track.rolePlan->roleRows);
            rows += id + '\n' + track.rolePlan->roleRows + '\n';
        }
    }
    if (rows == m_runRoleRows) {
        return;
    }
    m_runRoleRows = rows;
    RoleTable table = RoleTable::parse("", "run rows").value();
    for (const auto& [id, text] : runs) {
        auto parsed = RoleTable::parse(*text, "run " + id + " role_rows");
        if (!parsed) {  // checked at StartRun; a record edited since is left out
            m_logger.warn(parsed.error());
            continue;
        }
        table.append(*parsed);
    }
    table.append(m_options.roleTable);
    // A new table's row indices differ: the walk starts afresh (every process read in full once).
    m_roleMemory = std::make_unique<RoleMemory>(std::move(table));
    m_logger.info("process roles: " + std::to_string(runs.size()) +
                  " run(s) with their own role rows; the walk's table rebuilt");
}

void Collector::sampleRoles(std::int64_t nowNs) {
    if (!m_roleMemory) {
        return;
    }
    syncRunRoleRows();
    std::vector<pid_t> runPids;
    for (const auto& [id, track] : m_tracks) {
        if (!track.ended) {
            runPids.insert(runPids.end(), track.pids.begin(), track.pids.end());
        }
    }
    const RoleMemorySample s = m_roleMemory->sample(runPids);
    auto put = [&](const std::string& name, double v) { addSample(nowNs, "", name, v, v, v); };
    const auto& roles = m_roleMemory->table().roles();
    for (std::size_t i = 0; i < roles.size() && i < s.roles.size(); ++i) {
        const RoleUsage& u = s.roles[i];
        const std::string& role = roles[i];
        put(series::role(role, series::kRoleRss), static_cast<double>(u.rssBytes));
        put(series::role(role, series::kRoleProcesses), static_cast<double>(u.processes));
        if (u.processes == 0 || !u.detailed) {
            continue;
        }
        // A sum over only some of the role's processes would be a wrong number: sent only when
        // every process was read; `unreadable` says how many were not.
        put(series::role(role, series::kRoleUnreadable), static_cast<double>(u.unreadable));
        if (u.pssReadable == u.processes) {
            put(series::role(role, series::kRolePss), static_cast<double>(u.pssBytes));
        }
        if (u.detailReadable == u.processes) {
            put(series::role(role, series::kRoleSwap), static_cast<double>(u.swapBytes));
            put(series::role(role, series::kRoleLocked), static_cast<double>(u.lockedBytes));
        }
        if (u.objectStoreProcesses > 0) {
            put(series::role(role, series::kRoleObjectStore),
                static_cast<double>(u.objectStoreBytes));
        }
    }
    for (const auto& [engine, rss] : s.engines) {
        put(series::roleEngineRss(std::to_string(engine)), static_cast<double>(rss));
    }
    std::vector<CollectorSnapshot::Role> snap;
    for (std::size_t i = 0; i < roles.size() && i < s.roles.size(); ++i) {
        snap.push_back({roles[i], s.roles[i].rssBytes, s.roles[i].processes});
    }
    std::vector<CollectorSnapshot::PlannedRole> planSnap;
    for (const auto& [id, track] : m_tracks) {
        if (!track.ended && track.rolePlan) {
            for (const PlannedRoleRow& row : track.rolePlan->planned) {
                planSnap.push_back({id, row.role, row.phase, row.bytes, row.phase == track.phase});
            }
        }
    }
    {
        std::lock_guard lock(m_mutex);
        m_snapshot.roles = std::move(snap);
        m_snapshot.plannedRoles = std::move(planSnap);
    }
    // Plan beside measurement: each live run's planned bytes per role, every phase, and the
    // phase in progress as role.<role>.planned_bytes (run-level series).
    for (const auto& [id, track] : m_tracks) {
        if (track.ended || !track.rolePlan) {
            continue;
        }
        for (const PlannedRoleRow& row : track.rolePlan->planned) {
            addSample(nowNs, id, series::role(row.role, "planned_" + row.phase + "_bytes"),
                      telemetry::Unit::Bytes, row.bytes, row.bytes, row.bytes, -1);
            if (row.phase == track.phase) {
                addSample(nowNs, id, series::role(row.role, "planned_bytes"),
                          telemetry::Unit::Bytes, row.bytes, row.bytes, row.bytes, -1);
            }
        }
    }
    put(series::kRolesScanned, static_cast<double>(s.scanned));
    put(series::kRolesVanished, static_cast<double>(s.vanished));
    put(series::kRolesSkipped, static_cast<double>(s.skipped));
    put(series::kRolesScanSeconds, s.seconds);
}

void Collector::addGpuRoleSamples(std::int64_t nowNs,
                                  const std::vector<std::pair<unsigned, pid_t>>& procs,
                                  const std::vector<std::uint64_t>& usedBytes) {
    if (!m_roleMemory) {
        return;
    }
    const auto& roles = m_roleMemory->table().roles();
    std::map<std::pair<unsigned, std::string>, double> byRole;
    for (std::size_t i = 0; i < procs.size() && i < usedBytes.size(); ++i) {
        const int role = m_roleMemory->roleOf(procs[i].second);
        // A process the last walk did not see (it started since) counts as other until the next.
        const int other = m_roleMemory->table().roleIndex(kRoleOther);
        const std::string& name = roles[static_cast<std::size_t>(
            role >= 0 && static_cast<std::size_t>(role) < roles.size() ? role : other)];
        byRole[{procs[i].first, name}] += static_cast<double>(usedBytes[i]);
    }
    for (const auto& [key, bytes] : byRole) {
        addSample(nowNs, "", series::gpuRoleMemUsed(key.first, key.second), bytes, bytes, bytes);
    }
}

}  // namespace runplane::agent
