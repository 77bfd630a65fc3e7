#pragma once
// Confinement of run working directories under the daemon's run root, and run-id validation.

#include <cstddef>
#include <string>

#include "common/result.h"

namespace runplane::agent {

/// Bounds on a requested working directory, checked on its text before the file system is
/// touched (docs/security.md, "Red-team round (issue 41): daemon").
inline constexpr std::size_t kMaxWorkdirBytes = 1024;
inline constexpr std::size_t kMaxWorkdirDepth = 32;
inline constexpr std::size_t kMaxWorkdirComponentBytes = 255;  // NAME_MAX

/// Run ids name directories: 1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-'.
Status validateRunId(const std::string& runId);

/// Refuses, before any system call, a `requested` with a NUL byte, more than kMaxWorkdirBytes,
/// more than kMaxWorkdirDepth levels or a component over kMaxWorkdirComponentBytes. Then resolves
/// `requested` (relative to root, or absolute but inside root; empty = `fallback`)
/// to a canonical directory under `root`, creating missing components (mode 0750) one at a
/// time. Rejects "..", absolute paths outside root, and any component that resolves outside
/// root through a symlink, before creating anything beyond it. root itself is created if
/// missing. Returns the canonical absolute path.
Result<std::string> confineWorkdir(const std::string& root, const std::string& requested,
                                   const std::string& fallback);

/// mkdir -p with mode; error names the path.
Status makeDirectories(const std::string& path, unsigned mode);

/// Writes a file atomically (temp file in the same directory, fsync, rename).
Status writeFileAtomic(const std::string& path, const std::string& content, unsigned mode = 0640);

}  // namespace runplane::agent
