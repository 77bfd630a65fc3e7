// runplaned: the Runplane node daemon. Flags and files: docs/daemon.md.
#include "backend/agent/daemon.h"

int main(int argc, char** argv) {
    return runplane::agent::daemonMain(argc, argv);
}
