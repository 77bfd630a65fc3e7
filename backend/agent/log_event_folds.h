#pragma once
// One failure, one event (issue #42): some failures are told twice, on lines a few apart, and each
// telling is an event of its own kind. A row of this table names the first telling (an event that
// may be restated), the restatement, how the restatement's details join the first event and
// within how many lines. LogReader holds a first telling for that many non-empty lines (or to the
// end of the stream); a restatement in that window is folded into it and the one event goes out
// then; with none, it goes out as it was. Rows and their real pastes: docs/daemon.md "Log formats".

#include <string_view>
#include <vector>

#include "backend/agent/log_metrics.h"

namespace runplane::agent {

struct EventFold {
    std::string_view name;
    bool (*first)(const LogEvent& e);                                // may be restated
    bool (*restates)(const LogEvent& first, const LogEvent& later);  // `later` tells `first` again
    void (*fold)(LogEvent& first, const LogEvent& later);            // later's details into first
    int window;  // non-empty lines after the first telling within which a restatement is folded
};

/// The table (log_event_folds.cpp).
const std::vector<EventFold>& eventFolds();

}  // namespace runplane::agent
