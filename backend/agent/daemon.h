#pragma once
// runplaned's composition root: parses flags, enforces the security rule, opens the spool and
// run records (re-attaching to runs that outlived a previous daemon), starts the collector, the
// gRPC server (health checking + reflection on) and the optional /metrics endpoint, then waits
// for SIGTERM/SIGINT. Stopping the daemon never stops runs.

namespace runplane::agent {

/// The whole of runplaned's main(). Returns the process exit code (2 = bad flags/config).
int daemonMain(int argc, char** argv);

}  // namespace runplane::agent
