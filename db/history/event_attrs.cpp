// History: event attributes between the API's map (db::EventAttrs) and the stored JSON text of
// events.attrs_json (docs/history.md, "Event attributes"). The only place that writes or parses
// that text.
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "db/history/history.h"
#include "db/history/history_impl.h"

namespace runplane::db {

EventAttrs eventAttrs(const std::map<std::string, std::string>& strings) {
    return EventAttrs(strings.begin(), strings.end());
}

std::string attrText(const EventAttrs& attrs, std::string_view name) {
    const auto it = attrs.find(std::string(name));
    if (it == attrs.end()) {
        return {};
    }
    return it->second.is_string() ? it->second.get<std::string>() : json_text::dump(it->second);
}

std::string encodeEventAttrs(const EventAttrs& attrs) {
    // nlohmann's object is a std::map too: keys come out sorted, as before.
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : attrs) {
        object[key] = value;
    }
    return json_text::dump(object);
}

EventAttrs decodeEventAttrs(const std::string& json) {
    EventAttrs attrs;
    nlohmann::json object = nlohmann::json::parse(json, nullptr, false);
    if (!object.is_object()) {
        return attrs;
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        attrs.emplace(it.key(), std::move(it.value()));
    }
    return attrs;
}

}  // namespace runplane::db
