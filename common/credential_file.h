#pragma once
// The one reader of credential and configuration files named by a user (token files, TLS
// certificates and keys, the metrics web config and the files it names, cluster profiles):
// regular files only, size-capped, never blocking. A path to /dev/zero, a FIFO, a directory or a
// socket is refused with a sentence naming it, before a byte is read (docs/security.md,
// "Credential files"). Plain C++17: no Qt, no gRPC.

#include <cstddef>
#include <string>

#include "common/result.h"

namespace runplane {

/// Caps, by kind of file.
inline constexpr std::size_t kTokenFileMaxBytes = 4096;       // a bearer token file
inline constexpr std::size_t kPemFileMaxBytes = 1u << 20;     // a certificate, key or CA bundle
inline constexpr std::size_t kConfigFileMaxBytes = 1u << 20;  // a YAML web config or profile

/// The whole of `path`, opened with O_NONBLOCK (a FIFO never blocks the caller) and O_NOCTTY,
/// checked with fstat to be a regular file of at most `maxBytes`. Errors start with `what`
/// and the path ("--token-file /x: ..."): not found, permission, not a regular file (what it
/// is), or too large (its size and the cap). A file that grows past the cap while read is
/// refused too.
Result<std::string> readCredentialFile(const std::string& path, std::size_t maxBytes,
                                       const std::string& what);

}  // namespace runplane
