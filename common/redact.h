#pragma once
// Redaction of secrets before anything reaches a file others may read (the run history). Plain
// C++ (no Qt, no gRPC). The rule is documented in docs/security.md; in short, a name (an
// environment variable, a command-line flag, a YAML or JSON key) is secret-looking when it is
// one of the project's known secrets or its last word is a secret word, and its last word is not
// a reference word (FILE, PATH, ...): RUNPLANE_TOKEN and --wandb-key are secrets,
// RUNPLANE_TOKEN_FILE and --token-file are paths to secrets, --max-tokens-per-gpu is neither.

#include <string>
#include <string_view>
#include <vector>

namespace runplane::redact {

/// What a secret value is replaced with.
inline constexpr std::string_view kRedacted = "<redacted>";

/// True when `name` looks like it names a secret (case-insensitive; words are split at '_',
/// '-', '.', spaces and lower-to-upper case changes; leading dashes are ignored).
bool isSecretName(std::string_view name);

/// argv with secret values replaced: the word after a secret-looking flag ("--hf-token X"),
/// the value of "--flag=X" with a secret-looking flag, and the value of "NAME=X" words with a
/// secret-looking NAME ("--env RUNPLANE_TOKEN=X"). The number of words never changes.
std::vector<std::string> redactArgv(const std::vector<std::string>& argv);

/// Free text (a command line, a YAML document, a log message): the same rules as redactArgv
/// applied to its whitespace-separated words, plus "name: X" / "name = X" on one line with a
/// secret-looking name. Whitespace and everything else are kept byte for byte.
std::string redactText(std::string_view text);

/// A JSON document: every value under a secret-looking key becomes "<redacted>", arrays of
/// strings are redacted as argv, other strings as text. Text that is not JSON is redacted as
/// text. Returns compact JSON.
std::string redactJson(std::string_view json);

/// True when `text` would be changed by redactText (used by tests and callers that warn).
bool containsSecret(std::string_view text);

}  // namespace runplane::redact
