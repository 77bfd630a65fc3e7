#include "backend/agent/record_text.h"

#include <string>
#include <utility>
#include <vector>

#include "common/utf8_text.h"

namespace runplane::agent {

int makeRecordTextValid(v1::TelemetryRecord& record) {
    int changed = 0;
    const auto fix = [&changed](std::string* text) {
        if (makeValidUtf8(*text)) {
            ++changed;
        }
    };
    if (!isValidUtf8(record.run_id())) {
        fix(record.mutable_run_id());
    }
    if (record.has_sample() && !isValidUtf8(record.sample().series())) {
        fix(record.mutable_sample()->mutable_series());
    }
    if (!record.has_event()) {
        return changed;
    }
    auto* event = record.mutable_event();
    if (!isValidUtf8(event->message())) {
        fix(event->mutable_message());
    }
    // Map keys cannot be changed in place: rebuild the map when any key or value is ill-formed.
    // Two keys that become equal after replacement keep the first value (in map order).
    bool anyBad = false;
    for (const auto& [key, value] : event->attrs()) {
        anyBad = anyBad || !isValidUtf8(key) || !isValidUtf8(value);
    }
    if (anyBad) {
        std::vector<std::pair<std::string, std::string>> attrs(event->attrs().begin(),
                                                               event->attrs().end());
        event->mutable_attrs()->clear();
        for (auto& [key, value] : attrs) {
            fix(&key);
            fix(&value);
            auto& map = *event->mutable_attrs();
            if (map.count(key) == 0) {
                map[key] = std::move(value);
            }
        }
    }
    return changed;
}

}  // namespace runplane::agent
