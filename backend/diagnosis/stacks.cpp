// py-spy's JSON dump and the grouping frame (stacks.h).
#include "backend/diagnosis/stacks.h"

namespace runplane::diagnosis {
namespace {

using nlohmann::json;

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename T>
T valueOr(const json& obj, const char* key, T fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return fallback;
    }
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return fallback;
    }
}

}  // namespace

Result<std::vector<ThreadStack>> parsePySpyJson(std::string_view text) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) {
        return Error{"py-spy output: not valid JSON (" + std::to_string(text.size()) + " bytes)"};
    }
    if (!j.is_array()) {
        return Error{"py-spy output: expected an array of threads, got " +
                     std::string(j.type_name())};
    }
    std::vector<ThreadStack> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const json& t = j[i];
        const std::string at = "py-spy output: [" + std::to_string(i) + "]";
        if (!t.is_object()) {
            return Error{at + ": expected an object"};
        }
        ThreadStack thread;
        thread.threadId = valueOr<std::int64_t>(t, "thread_id", 0);
        thread.threadName = valueOr<std::string>(t, "thread_name", "");
        thread.active = valueOr<bool>(t, "active", false);
        thread.ownsGil = valueOr<bool>(t, "owns_gil", false);
        auto frames = t.find("frames");
        if (frames != t.end() && !frames->is_null()) {
            if (!frames->is_array()) {
                return Error{at + ".frames: expected an array"};
            }
            for (const json& f : *frames) {
                if (!f.is_object()) {
                    return Error{at + ".frames: expected objects"};
                }
                StackFrame frame;
                frame.name = valueOr<std::string>(f, "name", "");
                frame.file = valueOr<std::string>(f, "short_filename", "");
                if (frame.file.empty()) {
                    frame.file = valueOr<std::string>(f, "filename", "");
                }
                frame.line = valueOr<std::int64_t>(f, "line", 0);
                thread.frames.push_back(std::move(frame));
            }
        }
        out.push_back(std::move(thread));
    }
    return out;
}

StackFrame signatureFrame(const std::vector<ThreadStack>& threads) {
    const ThreadStack* main = nullptr;
    for (const auto& t : threads) {
        if (t.threadName == "MainThread") {
            main = &t;
            break;
        }
    }
    if (main == nullptr && !threads.empty()) {
        main = &threads.front();
    }
    if (main == nullptr || main->frames.empty()) {
        return {};
    }
    for (const auto& f : main->frames) {
        if (endsWith(f.file, ".py")) {
            return f;
        }
    }
    return main->frames.front();
}

json toJson(const StackFrame& f) {
    return {{"name", f.name}, {"file", f.file}, {"line", f.line}};
}

json toJson(const ThreadStack& t) {
    json frames = json::array();
    for (const auto& f : t.frames) {
        frames.push_back(toJson(f));
    }
    return {{"thread_id", t.threadId},
            {"thread_name", t.threadName},
            {"active", t.active},
            {"owns_gil", t.ownsGil},
            {"frames", std::move(frames)}};
}

StackFrame stackFrameFromJson(const json& j) {
    StackFrame f;
    if (j.is_object()) {
        f.name = valueOr<std::string>(j, "name", "");
        f.file = valueOr<std::string>(j, "file", "");
        f.line = valueOr<std::int64_t>(j, "line", 0);
    }
    return f;
}

ThreadStack threadStackFromJson(const json& j) {
    ThreadStack t;
    if (!j.is_object()) {
        return t;
    }
    t.threadId = valueOr<std::int64_t>(j, "thread_id", 0);
    t.threadName = valueOr<std::string>(j, "thread_name", "");
    t.active = valueOr<bool>(j, "active", false);
    t.ownsGil = valueOr<bool>(j, "owns_gil", false);
    if (auto fs = j.find("frames"); fs != j.end() && fs->is_array()) {
        for (const auto& f : *fs) {
            t.frames.push_back(stackFrameFromJson(f));
        }
    }
    return t;
}

}  // namespace runplane::diagnosis
