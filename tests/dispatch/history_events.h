#pragma once
// The events of one kind a history holds, read as another process would (read-only): what the
// reachability tests of dispatch read after a watch recorded them.

#include <string>
#include <vector>

#include "db/history/history.h"

namespace runplane::dispatch_testing {

inline std::vector<db::EventRecord> eventsOfKind(const std::string& history,
                                                 const std::string& kind) {
    db::OpenOptions readOnly;
    readOnly.readOnly = true;
    auto h = db::History::open(history, readOnly);
    if (!h.ok()) {
        return {};
    }
    db::EventFilter filter;
    filter.kind = kind;
    auto events = (*h)->listEvents(filter);
    return events.ok() ? *events : std::vector<db::EventRecord>{};
}

}  // namespace runplane::dispatch_testing
