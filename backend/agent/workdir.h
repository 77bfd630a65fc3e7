#pragma once
// Confinement of run working directories under the daemon's run root, and run-id validation.

#include <string>

#include "common/result.h"

namespace runplane::agent {

/// Run ids name directories: 1-128 characters of [A-Za-z0-9._-], not starting with '.' or '-'.
Status validateRunId(const std::string& runId);

/// Resolves `requested` (relative to root, or absolute but inside root; empty = `fallback`)
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
