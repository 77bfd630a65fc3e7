#pragma once
// TLS 1.2 as the floor for every TLS context the daemon creates, gRPC's included. gRPC 1.51 (the
// Debian 12 build) has no public minimum-version setting and its server accepts TLS 1.1 (found by
// tests/agent/stock_tools_test.cpp), so the daemon loads, before it creates any TLS context, an
// OpenSSL configuration whose `system_default` section says `MinProtocol = TLSv1.2`; OpenSSL
// applies that section to each SSL_CTX at creation. The configuration lives in a memfd: nothing
// is written to disk and no file can be swapped under the daemon.

#include "common/result.h"

namespace runplane::agent {

/// Call once, before any TLS context exists (the daemon: once its flags say a port speaks TLS,
/// before it drops root); checks the effect on a fresh context and returns an error if it did not
/// take.
Status enforceTlsFloor();

}  // namespace runplane::agent
