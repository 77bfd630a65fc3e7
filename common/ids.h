#pragma once
// Typed identifiers (issue #22): a run's id and a node's id are both strings on the wire and in
// the history, but never interchangeable; these wrappers make passing one where the other is
// meant a compile error. Plain C++ (no Qt, no protobuf), header-only.

#include <compare>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace runplane {

/// A string id of kind Tag. Explicit to make from a string, explicit to read (value()), ordered
/// and hashable so it can key a map. Empty means "none" where the API says so.
template <typename Tag>
class StrongId {
  public:
    StrongId() = default;
    explicit StrongId(std::string value) : m_value(std::move(value)) {}
    explicit StrongId(const char* value) : m_value(value) {}

    const std::string& value() const { return m_value; }
    bool empty() const { return m_value.empty(); }

    friend bool operator==(const StrongId&, const StrongId&) = default;
    friend auto operator<=>(const StrongId&, const StrongId&) = default;

  private:
    std::string m_value;
};

/// A run's id ("grpo-qwen3-8b-20260102-1"), as StartRun, the history's runs table and every
/// telemetry record name it.
using RunId = StrongId<struct RunIdTag>;
/// A node's id (NodeInfo.node_id: stable across daemon restarts), as the history keys its
/// telemetry by.
using NodeId = StrongId<struct NodeIdTag>;

}  // namespace runplane

template <typename Tag>
struct std::hash<runplane::StrongId<Tag>> {
    std::size_t operator()(const runplane::StrongId<Tag>& id) const noexcept {
        return std::hash<std::string>{}(id.value());
    }
};
