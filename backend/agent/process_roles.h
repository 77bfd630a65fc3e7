#pragma once
// Process roles (issue 43): which part of an RL run each process on a node is — trainer, rollout,
// router, ray, driver or other — decided by a table of rows (docs/daemon.md, "Process roles"),
// not by code. A row matches one field of a process (its title = argv[0] as /proc/PID/cmdline
// shows it after setproctitle, its whole command line, or its comm) against a glob; the first
// matching row wins. A process no row matches takes its parent's role when that role inherits
// (trainer, rollout, router, driver and a site's own roles do; ray and other do not), else
// `driver` when it belongs to a run's process tree, else `other`. A site adds rows for a
// framework we do not know with `--role-table FILE` (its rows are tried before the built-in ones).
// Pure: no /proc access here (role_memory.h reads the process table).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::agent {

/// The field of a process a row looks at.
enum class RoleField {
    Title,    // argv[0] as /proc/PID/cmdline holds it (setproctitle / `exec -a` write it)
    Cmdline,  // every argument, joined by single spaces
    Comm,     // /proc/PID/comm (15 bytes; the kernel's name, prctl(PR_SET_NAME))
};

/// One row: processes whose `field` matches `pattern` (a glob, fnmatch(3): `*`, `?`, `[...]`,
/// matched against the whole field) have `role`. `objectStore`: the process maps Ray's object
/// store (the raylet hosts the plasma store): its resident shared memory is the store's usage.
struct RoleRule {
    std::string role;
    RoleField field = RoleField::Title;
    std::string pattern;
    bool objectStore = false;
};

/// The roles every node reports, in this order, then a table's own roles in first-use order.
inline constexpr std::string_view kRoleTrainer = "trainer";
inline constexpr std::string_view kRoleRollout = "rollout";
inline constexpr std::string_view kRoleRouter = "router";
inline constexpr std::string_view kRoleRay = "ray";
inline constexpr std::string_view kRoleDriver = "driver";
inline constexpr std::string_view kRoleOther = "other";

class RoleTable {
  public:
    /// The built-in rows (slime, miles, vime; SGLang, vLLM, Ray), documented in docs/daemon.md.
    static const RoleTable& builtin();
    /// Parses rows, one per line: `ROLE FIELD PATTERN [object_store]`, fields separated by
    /// blanks; FIELD is `title`, `cmdline` or `comm`; the pattern runs to the end of the line
    /// (it may hold spaces) unless the line ends with the word `object_store`; `#` starts a
    /// comment line. ROLE is `[a-z][a-z0-9_]{0,31}` and not `other`. Errors name `source:LINE`.
    static Result<RoleTable> parse(std::string_view text, const std::string& source);
    /// parse() of FILE's rows followed by the built-in rows (a site's rows win). At most 1 MiB
    /// and 4,096 rows.
    static Result<RoleTable> load(const std::string& path);

    const std::vector<RoleRule>& rules() const { return m_rules; }
    /// Every role name: the six fixed ones, then the table's own.
    const std::vector<std::string>& roles() const { return m_roles; }
    /// Index of `role` in roles(); -1 if absent.
    int roleIndex(std::string_view role) const;
    /// Whether a process no row matches takes its parent's role `role`.
    bool inherits(int roleIndex) const;

    /// Index of the first rule matching the process, or -1. `cmdline` is /proc/PID/cmdline as
    /// read (NUL-separated, possibly truncated, any bytes).
    int match(std::string_view cmdline, std::string_view comm) const;

    /// Appends `other`'s rows after this table's (used by load()).
    void append(const RoleTable& other);

  private:
    void addRole(const std::string& role);
    std::vector<RoleRule> m_rules;
    std::vector<std::string> m_roles;
};

/// argv[0] of a NUL-separated command line (the title setproctitle writes).
std::string_view titleOf(std::string_view cmdline);
/// The arguments joined by single spaces (trailing NULs dropped).
std::string joinedCmdline(std::string_view cmdline);
/// Printable ASCII for a label or a log line: bytes outside 0x20..0x7e become '?', at most
/// `maxBytes` kept.
std::string printableTitle(std::string_view text, std::size_t maxBytes = 120);

}  // namespace runplane::agent
