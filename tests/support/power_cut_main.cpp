// Linked into runplaned-powercut and runplanectl-powercut (tests/reliability): the program's own
// main (compiled there as wrapped_main) with every SQLite file of the process going through the
// fault VFS (tests/support/fault_vfs.h), and, where the environment asks, a power cut among the
// writes to one file: RUNPLANE_TEST_POWER_CUT_PATH (the spool or the history), _DIR (where the
// cut's copies go), _EVERY (every Nth write where two or more are unsynced), _TORN (torn copies),
// _AT (the cut at which the process kills itself). Armed in main, not by a static initialiser: the
// VFS's own globals live in another translation unit, whose initialisation order is not defined.
#include <cstdlib>

#include "tests/support/fault_vfs.h"

#undef main
int wrapped_main(int argc, char** argv);

namespace {

int envInt(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

}  // namespace

int main(int argc, char** argv) {
    namespace faultvfs = runplane::testing::faultvfs;
    faultvfs::install();
    const char* path = std::getenv("RUNPLANE_TEST_POWER_CUT_PATH");
    const char* dir = std::getenv("RUNPLANE_TEST_POWER_CUT_DIR");
    if (path != nullptr && dir != nullptr) {
        faultvfs::trackUnsynced(path);
        faultvfs::powerCutAt(path, dir, envInt("RUNPLANE_TEST_POWER_CUT_EVERY", 7),
                             envInt("RUNPLANE_TEST_POWER_CUT_TORN", 1),
                             envInt("RUNPLANE_TEST_POWER_CUT_AT", 1));
    }
    return wrapped_main(argc, argv);
}
