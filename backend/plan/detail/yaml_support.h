#pragma once
// Internal: reading YAML maps field by field with line:column marks, unknown-key detection with
// "did you mean" suggestions, and writing only non-default fields. yaml-cpp stays behind this
// header (never included by the public headers of runplane_plan).

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/plan/detail/enum_tables.h"
#include "backend/plan/recipe.h"

namespace runplane::plan::detail {

/// Levenshtein distance (small strings only).
std::size_t editDistance(std::string_view a, std::string_view b);
/// The closest candidate within a distance that scales with the word, or "" if none is close.
std::string closestMatch(std::string_view word, const std::vector<std::string_view>& candidates);

SourceLoc locOf(const YAML::Mark& mark);

/// Most diagnostics kept for one file; a hostile file with 10000 bad keys still gets a short
/// report in bounded time.
inline constexpr std::size_t kMaxDiagnostics = 100;

/// Where diagnostics and field locations go while a document is read.
struct ParseContext {
    std::vector<ParseDiagnostic>* diagnostics = nullptr;
    SourceMap* sources = nullptr;
    void error(std::string path, SourceLoc loc, std::string message) const;
};

/// Reads one YAML mapping. Every accessor registers its key as known; finish() reports the keys
/// nobody asked for. A null/absent node reads as an empty mapping.
class MapReader {
  public:
    MapReader(const ParseContext& context, const YAML::Node& node, std::string path);

    bool present(const char* key);
    /// The value node of key (registers it), or an invalid node.
    YAML::Node child(const char* key);
    std::string pathOf(std::string_view key) const;
    SourceLoc keyLoc(const char* key) const;
    bool isMap() const { return m_isMap; }
    const ParseContext& context() const { return m_context; }

    void get(const char* key, int& out);
    void get(const char* key, double& out);
    void get(const char* key, bool& out);
    void get(const char* key, std::string& out);
    void get(const char* key, std::vector<int>& out);
    void get(const char* key, std::vector<std::string>& out);
    template <typename T>
    void get(const char* key, std::optional<T>& out) {
        if (present(key)) {
            T value{};
            if (read(key, value)) {
                out = value;
            }
        }
    }
    template <typename E>
    void getEnum(const char* key, E& out) {
        const YAML::Node* node = find(key);
        if (node == nullptr) {
            return;
        }
        readEnum(key, *node, out);
    }
    template <typename E>
    void getEnum(const char* key, std::optional<E>& out) {
        const YAML::Node* node = find(key);
        if (node == nullptr) {
            return;
        }
        E value{};
        if (readEnum(key, *node, value)) {
            out = value;
        }
    }
    /// An enum given by its names (the recipe field table): *out = the name read; false when
    /// absent or not one of names (reported as getEnum does).
    bool getChoice(const char* key, const std::vector<std::string_view>& names, std::string& out) {
        const YAML::Node* node = find(key);
        std::size_t index = 0;
        if (node == nullptr || !readChoice(key, *node, names, index)) {
            return false;
        }
        out = std::string(names[index]);
        return true;
    }
    /// Reports unknown keys (with a suggestion) and must be called once, after all accessors.
    void finish();

  private:
    struct Entry {
        std::string key;
        YAML::Node keyNode;
        YAML::Node value;
        bool used = false;
    };
    const YAML::Node* find(const char* key);  // registers key; records its location
    Entry* entry(const char* key);            // the first entry with this key, or nullptr
    bool read(const char* key, int& out);
    bool read(const char* key, double& out);
    bool read(const char* key, bool& out);
    bool read(const char* key, std::string& out);
    bool scalarOf(const char* key, const YAML::Node& node, std::string& out);
    /// The index in names of the scalar at node, else an error listing the names (with a "did
    /// you mean" suggestion) and false.
    bool readChoice(const char* key, const YAML::Node& node,
                    const std::vector<std::string_view>& names, std::size_t& index);
    template <typename E>
    bool readEnum(const char* key, const YAML::Node& node, E& out) {
        const auto table = enumTable(static_cast<const E*>(nullptr));
        std::vector<std::string_view> names;
        for (const auto& entry : table) {
            names.emplace_back(entry.name);
        }
        std::size_t index = 0;
        if (!readChoice(key, node, names, index)) {
            return false;
        }
        out = table[index].value;
        return true;
    }

    const ParseContext& m_context;
    std::string m_path;
    bool m_isMap = true;
    std::vector<Entry> m_entries;
    std::unordered_map<std::string, std::size_t> m_index;  // key -> its first entry
    std::vector<std::string> m_known;
};

/// Shortest decimal text that reads back as the same double.
std::string formatDouble(double value);
/// True if a plain YAML scalar with this text would not read back as the same string in common
/// YAML tools (numbers, booleans, null, leading indicators, ...).
bool needsQuotes(std::string_view text);

/// Writes one mapping lazily: the key line (and every enclosing section) is emitted only when the
/// first non-default field arrives, so sections at their defaults disappear from the output.
class SectionWriter {
  public:
    SectionWriter(YAML::Emitter& out, const char* key, SectionWriter* parent = nullptr);
    ~SectionWriter();
    SectionWriter(const SectionWriter&) = delete;
    SectionWriter& operator=(const SectionWriter&) = delete;

    void field(const char* key, int value, int def);
    void field(const char* key, double value, double def);
    void field(const char* key, bool value, bool def);
    void field(const char* key, const std::string& value, const std::string& def = {});
    void field(const char* key, const std::vector<int>& value);
    void field(const char* key, const std::vector<std::string>& value);
    // Optional fields are written whenever they are set.
    void field(const char* key, const std::optional<int>& value);
    void field(const char* key, const std::optional<double>& value);
    void field(const char* key, const std::optional<bool>& value);
    template <typename E>
    void enumField(const char* key, E value, E def) {
        if (value != def) {
            keyLine(key);
            m_out << enumName(value);
        }
    }
    template <typename E>
    void enumField(const char* key, const std::optional<E>& value) {
        if (value.has_value()) {
            keyLine(key);
            m_out << enumName(*value);
        }
    }
    /// Emits "key:" and leaves the emitter ready for a value (opens the section if needed).
    void keyLine(const char* key);
    YAML::Emitter& emitter() { return m_out; }
    void open();

  private:
    YAML::Emitter& m_out;
    const char* m_key;  // nullptr = the document's top-level mapping
    SectionWriter* m_parent;
    bool m_open = false;
};

/// Emits a string scalar, quoted when a plain scalar would change meaning.
void emitString(YAML::Emitter& out, const std::string& text);

}  // namespace runplane::plan::detail
