// runplane-supervisor: started by runplaned, one per run (docs/daemon.md, "Runs outlive the
// daemon").
#include "backend/agent/supervisor.h"

int main(int argc, char** argv) {
    return runplane::agent::supervisorMain(argc, argv);
}
