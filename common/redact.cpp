#include "common/redact.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>

namespace runplane::redact {
namespace {

// The project's own secrets and the common ones of the frameworks it launches, matched as whole
// names (after upper-casing, '-' and '.' read as '_'). The word rule below catches them too;
// the list keeps them secret even if the rule is ever narrowed.
constexpr std::array<std::string_view, 12> kKnownSecrets = {
    "RUNPLANE_TOKEN",         "WANDB_API_KEY",     "WANDB_KEY",    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN", "HF_API_TOKEN",      "GITHUB_TOKEN", "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",  "AWS_SESSION_TOKEN", "NGC_API_KEY",  "AZURE_CLIENT_SECRET"};

// Secret wherever they appear in a name.
constexpr std::array<std::string_view, 8> kSecretAnywhere = {
    "SECRET", "SECRETS",    "PASSWORD",   "PASSWORDS",
    "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS"};

// Secret as the last word of a name.
constexpr std::array<std::string_view, 10> kSecretLast = {
    "TOKEN", "KEY", "KEYS", "APIKEY", "AUTH", "AUTHORIZATION", "COOKIE", "CREDS", "PASS", "PSK"};

// A compound last word ending in one of these is secret too (HFTOKEN, CLIENTSECRET).
constexpr std::array<std::string_view, 4> kSecretSuffix = {"TOKEN", "SECRET", "PASSWORD", "APIKEY"};

// A last word that makes the name a reference to a secret, not the secret (--token-file).
constexpr std::array<std::string_view, 7> kReferenceLast = {"FILE",     "FILES",  "PATH", "DIR",
                                                            "FILENAME", "SOCKET", "SOCK"};

// "KEY" after one of these names a data field, not a secret (slime's --input-key,
// --label-key, --reward-key, --metadata-key, --tool-key).
constexpr std::array<std::string_view, 12> kFieldKeyQualifiers = {
    "INPUT",    "LABEL",  "METADATA", "TOOL",  "TOOLS",     "PROMPT",
    "RESPONSE", "REWARD", "SORT",     "GROUP", "PARTITION", "MULTIMODAL"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

bool isSeparator(char c) {
    return c == '_' || c == '-' || c == '.' || c == ' ';
}

std::vector<std::string> nameWords(std::string_view name) {
    std::vector<std::string> words;
    std::string current;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (isSeparator(c)) {
            if (!current.empty()) {
                words.push_back(std::move(current));
                current.clear();
            }
            continue;
        }
        const bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
        if (upper && i > 0 && std::islower(static_cast<unsigned char>(name[i - 1])) &&
            !current.empty()) {
            words.push_back(std::move(current));
            current.clear();
        }
        current.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    if (!current.empty()) {
        words.push_back(std::move(current));
    }
    return words;
}

bool endsWith(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// A name as it can appear left of '=' in an environment assignment or a flag.
bool looksLikeName(std::string_view name) {
    if (name.empty()) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
    });
}

bool isFlag(std::string_view word) {
    return word.size() > 1 && word[0] == '-' && word != "--" &&
           !std::isdigit(static_cast<unsigned char>(word[1]));
}

// Quote and bracket characters around a word in YAML, JSON-ish or shell text.
bool isWrapper(char c) {
    return c == '"' || c == '\'' || c == '[' || c == ']' || c == '{' || c == '}' || c == '(' ||
           c == ')' || c == ',' || c == '`';
}

// Redacts one word in place given the argv rules; `pending` is set when the word is a secret
// flag whose value is the next word. Returns true when something was replaced.
bool redactWord(std::string& word, bool& pending) {
    // The core of the word, without quotes/brackets around it.
    std::size_t b = 0;
    std::size_t e = word.size();
    while (b < e && isWrapper(word[b])) {
        ++b;
    }
    while (e > b && isWrapper(word[e - 1])) {
        --e;
    }
    if (b >= e) {
        return false;
    }
    const std::string_view core(word.data() + b, e - b);
    if (pending) {
        if (core == "-" || core == "\\") {
            return false;  // a YAML list marker or a line continuation: the value follows
        }
        pending = false;
        if (!isFlag(core)) {
            word.replace(b, e - b, kRedacted);
            return true;
        }
    }
    const auto eq = core.find('=');
    if (isFlag(core)) {
        if (eq == std::string_view::npos) {
            pending = isSecretName(core);
            return false;
        }
        if (isSecretName(core.substr(0, eq))) {
            word.replace(b + eq + 1, e - b - eq - 1, kRedacted);
            return true;
        }
        // --env=NAME=VALUE
        const std::string_view value = core.substr(eq + 1);
        const auto inner = value.find('=');
        if (inner != std::string_view::npos && looksLikeName(value.substr(0, inner)) &&
            isSecretName(value.substr(0, inner))) {
            word.replace(b + eq + 1 + inner + 1, e - b - eq - 1 - inner - 1, kRedacted);
            return true;
        }
        return false;
    }
    if (eq != std::string_view::npos && eq > 0 && looksLikeName(core.substr(0, eq)) &&
        isSecretName(core.substr(0, eq))) {
        word.replace(b + eq + 1, e - b - eq - 1, kRedacted);
        return true;
    }
    return false;
}

std::string_view trimRight(std::string_view s) {
    while (!s.empty() && isSpace(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

std::size_t indentOf(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
        ++i;
    }
    return i;
}

// "key: value" at the start of a line (after indentation and YAML list markers): the key and
// where the value starts. Keys may be quoted.
struct KeyValue {
    std::string_view key;
    std::size_t valueBegin = 0;
};

std::optional<KeyValue> lineKey(std::string_view line) {
    std::size_t i = indentOf(line);
    while (i + 1 < line.size() && line[i] == '-' && line[i + 1] == ' ') {
        i += 2;
        while (i < line.size() && line[i] == ' ') {
            ++i;
        }
    }
    if (i >= line.size()) {
        return std::nullopt;
    }
    std::size_t keyBegin = i;
    std::size_t keyEnd = 0;
    std::size_t colon = 0;
    if (line[i] == '"' || line[i] == '\'') {
        const char quote = line[i];
        const auto close = line.find(quote, i + 1);
        if (close == std::string_view::npos) {
            return std::nullopt;
        }
        keyBegin = i + 1;
        keyEnd = close;
        colon = close + 1;
        while (colon < line.size() && line[colon] == ' ') {
            ++colon;
        }
    } else {
        std::size_t j = i;
        while (j < line.size() && line[j] != ':' && !isSpace(line[j])) {
            ++j;
        }
        keyEnd = j;
        colon = j;
    }
    if (colon >= line.size() || line[colon] != ':' ||
        (colon + 1 < line.size() && !isSpace(line[colon + 1]))) {
        return std::nullopt;
    }
    std::size_t v = colon + 1;
    while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) {
        ++v;
    }
    return KeyValue{line.substr(keyBegin, keyEnd - keyBegin), v};
}

bool isBlockIndicator(std::string_view value) {
    value = trimRight(value);
    return value == "|" || value == ">" || value == "|-" || value == ">-" || value == "|+" ||
           value == ">+";
}

// Inside a secret block (the more-indented lines under "password:" or "secrets:"), a line keeps
// its indentation, list markers and keys; every value becomes "<redacted>".
std::string redactBlockLine(std::string_view line) {
    const std::string_view trimmed = trimRight(line);
    if (trimmed.size() == indentOf(trimmed)) {
        return std::string(line);
    }
    std::size_t from = indentOf(line);
    if (auto kv = lineKey(line)) {
        from = kv->valueBegin;
    } else {
        while (from + 1 < line.size() && line[from] == '-' && line[from + 1] == ' ') {
            from += 2;
        }
    }
    if (from >= trimmed.size()) {
        return std::string(line);
    }
    return std::string(line.substr(0, from)) + std::string(kRedacted) +
           std::string(line.substr(trimmed.size()));
}

// Word rules over one line, keeping every separator byte; "name = value" too.
std::string redactWords(std::string_view line, bool& pending) {
    std::string out;
    out.reserve(line.size());
    std::size_t i = 0;
    bool assignPending = false;  // the previous words were "secret-name" "="
    std::string previous;
    while (i < line.size()) {
        if (isSpace(line[i])) {
            out.push_back(line[i++]);
            continue;
        }
        std::size_t j = i;
        while (j < line.size() && !isSpace(line[j])) {
            ++j;
        }
        std::string word(line.substr(i, j - i));
        if (assignPending) {
            assignPending = false;
            word = std::string(kRedacted);
        } else if (word == "=" && looksLikeName(previous) && isSecretName(previous)) {
            assignPending = true;
        } else {
            redactWord(word, pending);
        }
        previous = std::string(line.substr(i, j - i));
        out += word;
        i = j;
    }
    return out;
}

void redactJsonValue(nlohmann::json& value);

void redactLeaves(nlohmann::json& value) {
    value = std::string(kRedacted);
}

void redactJsonValue(nlohmann::json& value) {
    if (value.is_object()) {
        for (auto it = value.begin(); it != value.end(); ++it) {
            if (isSecretName(it.key())) {
                redactLeaves(it.value());
            } else {
                redactJsonValue(it.value());
            }
        }
    } else if (value.is_array()) {
        const bool strings = std::all_of(value.begin(), value.end(),
                                         [](const nlohmann::json& v) { return v.is_string(); });
        if (strings && !value.empty()) {
            std::vector<std::string> argv;
            for (const auto& v : value) {
                argv.push_back(v.get<std::string>());
            }
            value = redactArgv(argv);
        } else {
            for (auto& v : value) {
                redactJsonValue(v);
            }
        }
    } else if (value.is_string()) {
        value = redactText(value.get<std::string>());
    }
}

}  // namespace

bool isSecretName(std::string_view name) {
    while (!name.empty() && name.front() == '-') {
        name.remove_prefix(1);
    }
    if (name.empty()) {
        return false;
    }
    std::string whole;
    for (char c : name) {
        whole.push_back(c == '-' || c == '.'
                            ? '_'
                            : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
    if (contains(kKnownSecrets, whole)) {
        return true;
    }
    const std::vector<std::string> words = nameWords(name);
    if (words.empty()) {
        return false;
    }
    const std::string& last = words.back();
    if (contains(kReferenceLast, last)) {
        return false;
    }
    for (const auto& word : words) {
        if (contains(kSecretAnywhere, word)) {
            return true;
        }
    }
    if (contains(kSecretLast, last)) {
        if ((last == "KEY" || last == "KEYS") && words.size() > 1 &&
            contains(kFieldKeyQualifiers, words[words.size() - 2])) {
            return false;
        }
        return true;
    }
    for (std::string_view suffix : kSecretSuffix) {
        if (last.size() > suffix.size() && endsWith(last, suffix)) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> redactArgv(const std::vector<std::string>& argv) {
    std::vector<std::string> out;
    out.reserve(argv.size());
    bool pending = false;
    for (const std::string& arg : argv) {
        std::string word = arg;
        const bool spaced = std::any_of(word.begin(), word.end(), isSpace);
        if (pending || !spaced) {
            // A value after a secret flag is replaced whole, spaces or not.
            if (pending && !isFlag(word)) {
                pending = false;
                out.push_back(std::string(kRedacted));
                continue;
            }
            pending = false;
            std::size_t eq = word.find('=');
            const bool flag = isFlag(word);
            if (flag && eq == std::string::npos) {
                pending = isSecretName(word);
            } else if (flag && isSecretName(std::string_view(word).substr(0, eq))) {
                word = word.substr(0, eq + 1) + std::string(kRedacted);
            } else if (!flag && eq != std::string::npos && eq > 0 &&
                       looksLikeName(std::string_view(word).substr(0, eq)) &&
                       isSecretName(std::string_view(word).substr(0, eq))) {
                word = word.substr(0, eq + 1) + std::string(kRedacted);
            } else {
                bool unused = false;
                redactWord(word, unused);  // --env=NAME=VALUE
            }
            out.push_back(std::move(word));
            continue;
        }
        // A word with spaces is a script (sh -c "...") or a message: redact it as text.
        out.push_back(redactText(word));
    }
    return out;
}

std::string redactText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool pending = false;
    bool inBlock = false;
    std::size_t blockIndent = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        const std::string_view line = text.substr(pos, end - pos);
        const std::string_view trimmed = trimRight(line);
        const bool blank = trimmed.size() == indentOf(trimmed);
        if (inBlock && (blank || indentOf(line) > blockIndent)) {
            out += redactBlockLine(line);
        } else {
            inBlock = false;
            auto kv = lineKey(line);
            if (kv && isSecretName(kv->key)) {
                const std::string_view value = trimmed.size() > kv->valueBegin
                                                   ? trimmed.substr(kv->valueBegin)
                                                   : std::string_view();
                if (value.empty() || isBlockIndicator(value)) {
                    inBlock = true;
                    blockIndent = indentOf(line);
                    out += line;
                } else {
                    out += line.substr(0, kv->valueBegin);
                    out += kRedacted;
                    out += line.substr(trimmed.size());
                }
                pending = false;
            } else {
                out += redactWords(line, pending);
            }
        }
        if (nl == std::string_view::npos) {
            break;
        }
        out.push_back('\n');
        pos = nl + 1;
    }
    return out;
}

std::string redactJson(std::string_view json) {
    auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
        return redactText(json);
    }
    redactJsonValue(parsed);
    return parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool containsSecret(std::string_view text) {
    return redactText(text) != text;
}

}  // namespace runplane::redact
