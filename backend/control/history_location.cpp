#include "backend/control/history_location.h"

#include <cstdlib>

namespace runplane::control {

std::string defaultHistoryPath() {
    if (const char* explicitPath = std::getenv("RUNPLANE_HISTORY"); explicitPath && *explicitPath) {
        return explicitPath;
    }
    if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data) {
        return std::string(data) + "/runplane/history.sqlite";
    }
    if (const char* home = std::getenv("HOME"); home && *home) {
        return std::string(home) + "/.local/share/runplane/history.sqlite";
    }
    return "history.sqlite";
}

}  // namespace runplane::control
