#include "backend/plan/detail/yaml_support.h"

#include <algorithm>
#include <cmath>

#include "backend/plan/recipe_limits.h"

namespace runplane::plan::detail {

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string closestMatch(std::string_view word, const std::vector<std::string_view>& candidates) {
    // Allow roughly one edit per three characters (at least 2), so "tpp" -> "tp" and
    // "rollout_batchsize" -> "rollout_batch_size" match but unrelated words do not.
    if (word.size() > 64) {
        return {};  // no key is that long; keeps the edit distance cheap on hostile input
    }
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    std::size_t best = limit + 1;
    std::string_view bestWord;
    for (std::string_view candidate : candidates) {
        const std::size_t d = editDistance(word, candidate);
        if (d < best) {
            best = d;
            bestWord = candidate;
        }
    }
    return std::string(bestWord);
}

SourceLoc locOf(const YAML::Mark& mark) {
    if (mark.is_null() || mark.line < 0) {
        return {};
    }
    return SourceLoc{mark.line + 1, mark.column + 1};
}

void ParseContext::error(std::string path, SourceLoc loc, std::string message) const {
    if (diagnostics->size() > kMaxDiagnostics) {
        return;
    }
    if (diagnostics->size() == kMaxDiagnostics) {
        diagnostics->push_back(ParseDiagnostic{"", loc,
                                               "more problems follow; only the first " +
                                                   std::to_string(kMaxDiagnostics) +
                                                   " are reported"});
        return;
    }
    diagnostics->push_back(ParseDiagnostic{std::move(path), loc, std::move(message)});
}

MapReader::MapReader(const ParseContext& context, const YAML::Node& node, std::string path)
    : m_context(context), m_path(std::move(path)) {
    if (!node.IsDefined() || node.IsNull()) {
        return;
    }
    if (!node.IsMap()) {
        m_isMap = false;
        m_context.error(m_path, locOf(node.Mark()),
                        "'" + (m_path.empty() ? std::string("document") : m_path) +
                            "' must be a mapping of keys to values");
        return;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
        Entry entry;
        entry.keyNode = it->first;
        entry.value = it->second;
        if (!it->first.IsScalar()) {
            m_context.error(m_path, locOf(it->first.Mark()), "keys must be plain names");
            continue;
        }
        entry.key = it->first.Scalar();
        const auto [previous, fresh] = m_index.emplace(entry.key, m_entries.size());
        if (!fresh) {
            const SourceLoc first = locOf(m_entries[previous->second].keyNode.Mark());
            m_context.error(pathOf(entry.key), locOf(it->first.Mark()),
                            "duplicate key '" + entry.key + "' (first given at line " +
                                std::to_string(first.line) + ")");
        }
        m_entries.push_back(std::move(entry));
    }
}

std::string MapReader::pathOf(std::string_view key) const {
    if (m_path.empty()) {
        return std::string(key);
    }
    std::string out = m_path;
    out += '.';
    out += key;
    return out;
}

MapReader::Entry* MapReader::entry(const char* key) {
    const auto it = m_index.find(key);
    return it == m_index.end() ? nullptr : &m_entries[it->second];
}

const YAML::Node* MapReader::find(const char* key) {
    m_known.emplace_back(key);
    Entry* found = entry(key);
    if (found == nullptr) {
        return nullptr;
    }
    found->used = true;
    if (m_context.sources != nullptr) {
        m_context.sources->set(pathOf(key), locOf(found->keyNode.Mark()));
    }
    if (found->value.IsNull()) {
        return nullptr;  // "key:" with no value keeps the default
    }
    return &found->value;
}

bool MapReader::present(const char* key) {
    return find(key) != nullptr;
}

YAML::Node MapReader::child(const char* key) {
    const YAML::Node* node = find(key);
    return node != nullptr ? *node : YAML::Node(YAML::NodeType::Undefined);
}

SourceLoc MapReader::keyLoc(const char* key) const {
    const auto it = m_index.find(key);
    return it == m_index.end() ? SourceLoc{} : locOf(m_entries[it->second].keyNode.Mark());
}

bool MapReader::scalarOf(const char* key, const YAML::Node& node, std::string& out) {
    if (!node.IsScalar()) {
        m_context.error(pathOf(key), locOf(node.Mark()),
                        "'" + pathOf(key) + "' must be a single value, not a " +
                            (node.IsMap() ? "mapping" : "list"));
        return false;
    }
    out = node.Scalar();
    return true;
}

namespace {

/// "'path' must be KIND in LO..HI, got 'text'" with the field's bound (the int range when it has
/// none); a number outside the bound gets the bound's message with its reason.
std::string typeMessage(const std::string& path, const char* kind, const std::string& text,
                        const char* range) {
    const FieldBound* b = findFieldBound(path);
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    const bool numeric = ec == std::errc::result_out_of_range ||
                         (ec == std::errc() && ptr == text.data() + text.size());
    if (b != nullptr && numeric && (number < b->min || number > b->max)) {
        return boundMessage(*b, path, "'" + text + "'");
    }
    const std::string in =
        b != nullptr ? formatDouble(b->min) + ".." + formatDouble(b->max) : std::string(range);
    return "'" + path + "' must be " + kind + (in.empty() ? "" : " in " + in) + ", got '" + text +
           "'";
}

std::string integerMessage(const std::string& path, const std::string& text) {
    return typeMessage(path, "an integer", text, "-2147483648..2147483647");
}

/// Reads a decimal integer (an optional leading '+') that fits in int.
bool parseInt(const std::string& text, int& out) {
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (!text.empty() && *begin == '+') {
        ++begin;
    }
    long long value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr != end || begin == end || value < INT32_MIN || value > INT32_MAX) {
        return false;
    }
    out = static_cast<int>(value);
    return true;
}

}  // namespace

bool MapReader::read(const char* key, int& out) {
    // find() was already called by present(); look the node up again without re-registering.
    Entry* found = entry(key);
    if (found == nullptr) {
        return false;
    }
    std::string text;
    if (!scalarOf(key, found->value, text)) {
        return false;
    }
    if (!parseInt(text, out)) {
        m_context.error(pathOf(key), locOf(found->value.Mark()), integerMessage(pathOf(key), text));
        return false;
    }
    return true;
}

bool MapReader::read(const char* key, double& out) {
    Entry* entry = this->entry(key);
    if (entry == nullptr) {
        return false;
    }
    std::string text;
    if (!scalarOf(key, entry->value, text)) {
        return false;
    }
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (!text.empty() && *begin == '+') {
        ++begin;
    }
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
        m_context.error(pathOf(key), locOf(entry->value.Mark()),
                        typeMessage(pathOf(key), "a number", text, ""));
        return false;
    }
    out = value;
    return true;
}

bool MapReader::read(const char* key, bool& out) {
    Entry* entry = this->entry(key);
    if (entry == nullptr) {
        return false;
    }
    std::string text;
    if (!scalarOf(key, entry->value, text)) {
        return false;
    }
    if (text == "true" || text == "True" || text == "yes" || text == "on") {
        out = true;
        return true;
    }
    if (text == "false" || text == "False" || text == "no" || text == "off") {
        out = false;
        return true;
    }
    m_context.error(pathOf(key), locOf(entry->value.Mark()),
                    "'" + pathOf(key) + "' must be true or false, got '" + text + "'");
    return false;
}

bool MapReader::read(const char* key, std::string& out) {
    Entry* entry = this->entry(key);
    return entry != nullptr && scalarOf(key, entry->value, out);
}

bool MapReader::readChoice(const char* key, const YAML::Node& node,
                           const std::vector<std::string_view>& names, std::size_t& index) {
    std::string text;
    if (!scalarOf(key, node, text)) {
        return false;
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == text) {
            index = i;
            return true;
        }
    }
    std::string list;
    for (std::string_view name : names) {
        list += list.empty() ? "" : ", ";
        list += name;
    }
    std::string message =
        "unknown value '" + text + "' for '" + pathOf(key) + "' (expected one of: " + list + ")";
    const std::string hint = closestMatch(text, names);
    if (!hint.empty()) {
        message += "; did you mean '" + hint + "'?";
    }
    m_context.error(pathOf(key), locOf(node.Mark()), std::move(message));
    return false;
}

void MapReader::get(const char* key, int& out) {
    if (present(key)) {
        read(key, out);
    }
}
void MapReader::get(const char* key, double& out) {
    if (present(key)) {
        read(key, out);
    }
}
void MapReader::get(const char* key, bool& out) {
    if (present(key)) {
        read(key, out);
    }
}
void MapReader::get(const char* key, std::string& out) {
    if (present(key)) {
        read(key, out);
    }
}

void MapReader::get(const char* key, std::vector<int>& out) {
    const YAML::Node* node = find(key);
    if (node == nullptr) {
        return;
    }
    if (!node->IsSequence()) {
        m_context.error(pathOf(key), locOf(node->Mark()),
                        "'" + pathOf(key) + "' must be a list of integers, e.g. [1, 2, 4]");
        return;
    }
    out.clear();
    for (std::size_t i = 0; i < node->size(); ++i) {
        const YAML::Node item = (*node)[i];
        int value = 0;
        const std::string text = item.IsScalar() ? item.Scalar() : std::string();
        if (!item.IsScalar() || !parseInt(text, value)) {
            const std::string itemPath = pathOf(key) + "[" + std::to_string(i) + "]";
            m_context.error(itemPath, locOf(item.Mark()),
                            item.IsScalar() ? integerMessage(itemPath, text)
                                            : "'" + pathOf(key) + "' items must be integers");
            continue;
        }
        out.push_back(value);
    }
}

void MapReader::get(const char* key, std::vector<std::string>& out) {
    const YAML::Node* node = find(key);
    if (node == nullptr) {
        return;
    }
    out.clear();
    if (node->IsScalar()) {
        // A comma list is accepted as the frameworks' flags take it: "q_proj,k_proj".
        std::string_view text = node->Scalar();
        while (!text.empty()) {
            const auto comma = text.find(',');
            std::string_view part = text.substr(0, comma);
            while (!part.empty() && part.front() == ' ') {
                part.remove_prefix(1);
            }
            while (!part.empty() && part.back() == ' ') {
                part.remove_suffix(1);
            }
            if (!part.empty()) {
                out.emplace_back(part);
            }
            if (comma == std::string_view::npos) {
                break;
            }
            text.remove_prefix(comma + 1);
        }
        return;
    }
    if (!node->IsSequence()) {
        m_context.error(pathOf(key), locOf(node->Mark()),
                        "'" + pathOf(key) + "' must be a list of names");
        return;
    }
    for (std::size_t i = 0; i < node->size(); ++i) {
        const YAML::Node item = (*node)[i];
        if (!item.IsScalar()) {
            m_context.error(pathOf(key) + "[" + std::to_string(i) + "]", locOf(item.Mark()),
                            "'" + pathOf(key) + "' items must be plain values");
            continue;
        }
        out.push_back(item.Scalar());
    }
}

void MapReader::finish() {
    for (const auto& entry : m_entries) {
        if (m_context.diagnostics->size() > kMaxDiagnostics) {
            return;  // the report is full; spare the suggestions' edit distances
        }
        if (entry.used || entry.key.empty()) {
            continue;
        }
        bool knownButRepeated = false;
        for (const std::string& known : m_known) {
            if (known == entry.key) {
                knownButRepeated = true;  // duplicate: already reported in the constructor
            }
        }
        if (knownButRepeated) {
            continue;
        }
        std::string message = "unknown key '" + pathOf(entry.key) + "'";
        const std::vector<std::string_view> known(m_known.begin(), m_known.end());
        const std::string hint = closestMatch(entry.key, known);
        if (!hint.empty()) {
            message += "; did you mean '" + hint + "'?";
        }
        m_context.error(pathOf(entry.key), locOf(entry.keyNode.Mark()), std::move(message));
    }
}

std::string formatDouble(double value) {
    char buffer[64];
    auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    if (ec != std::errc()) {
        return "0";
    }
    return std::string(buffer, ptr);
}

bool needsQuotes(std::string_view text) {
    if (text.empty()) {
        return true;
    }
    static constexpr std::string_view kReserved[] = {
        "true", "false", "True", "False", "TRUE", "FALSE", "yes",  "no",   "Yes",
        "No",   "on",    "off",  "On",    "Off",  "null",  "Null", "NULL", "~"};
    for (auto word : kReserved) {
        if (text == word) {
            return true;
        }
    }
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
        return true;
    }
    // Leading characters with a YAML meaning, surrounding blanks, or ": " / " #" inside.
    const char first = text.front();
    if (std::string_view("-?:,[]{}#&*!|>'\"%@`+.").find(first) != std::string_view::npos) {
        return true;
    }
    if (text.back() == ' ' || text.front() == ' ' || text.back() == ':') {
        return true;
    }
    if (text.find(": ") != std::string_view::npos || text.find(" #") != std::string_view::npos) {
        return true;
    }
    for (char c : text) {
        if (c == '\n' || c == '\t' || c == '"' || c == '\\') {
            return true;
        }
    }
    return false;
}

void emitString(YAML::Emitter& out, const std::string& text) {
    if (needsQuotes(text)) {
        out << YAML::DoubleQuoted << text;
    } else {
        out << text;
    }
}

SectionWriter::SectionWriter(YAML::Emitter& out, const char* key, SectionWriter* parent)
    : m_out(out), m_key(key), m_parent(parent) {}

SectionWriter::~SectionWriter() {
    if (m_open) {
        m_out << YAML::EndMap;
    }
}

void SectionWriter::open() {
    if (m_open) {
        return;
    }
    if (m_parent != nullptr) {
        m_parent->open();
    }
    if (m_key != nullptr) {
        m_out << YAML::Key << m_key << YAML::Value;
    }
    m_out << YAML::BeginMap;
    m_open = true;
}

void SectionWriter::keyLine(const char* key) {
    open();
    m_out << YAML::Key << key << YAML::Value;
}

void SectionWriter::field(const char* key, int value, int def) {
    if (value != def) {
        keyLine(key);
        m_out << value;
    }
}

void SectionWriter::field(const char* key, double value, double def) {
    if (value != def) {
        keyLine(key);
        m_out << formatDouble(value);
    }
}

void SectionWriter::field(const char* key, bool value, bool def) {
    if (value != def) {
        keyLine(key);
        m_out << (value ? "true" : "false");
    }
}

void SectionWriter::field(const char* key, const std::string& value, const std::string& def) {
    if (value != def) {
        keyLine(key);
        emitString(m_out, value);
    }
}

void SectionWriter::field(const char* key, const std::vector<int>& value) {
    if (value.empty()) {
        return;
    }
    keyLine(key);
    m_out << YAML::Flow << YAML::BeginSeq;
    for (int v : value) {
        m_out << v;
    }
    m_out << YAML::EndSeq;
}

void SectionWriter::field(const char* key, const std::vector<std::string>& value) {
    if (value.empty()) {
        return;
    }
    keyLine(key);
    m_out << YAML::Flow << YAML::BeginSeq;
    for (const auto& v : value) {
        emitString(m_out, v);
    }
    m_out << YAML::EndSeq;
}

void SectionWriter::field(const char* key, const std::optional<int>& value) {
    if (value.has_value()) {
        keyLine(key);
        m_out << *value;
    }
}

void SectionWriter::field(const char* key, const std::optional<double>& value) {
    if (value.has_value()) {
        keyLine(key);
        m_out << formatDouble(*value);
    }
}

void SectionWriter::field(const char* key, const std::optional<bool>& value) {
    if (value.has_value()) {
        keyLine(key);
        m_out << (*value ? "true" : "false");
    }
}

}  // namespace runplane::plan::detail
