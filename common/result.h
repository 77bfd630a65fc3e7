#pragma once
// Result<T>: a value or an Error, for fallible functions across library boundaries.
// Exceptions never cross a library boundary in Runplane; grpc::Status exists only at the RPC
// edge. An Error is a human sentence that names the place (file:line:column, field, flag) and an
// ErrorCode for the callers that branch on what went wrong: they compare codes, never the text.
// Plain C++17 (the GPU helpers are built with bare g++/nvcc on GPU hosts).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace runplane {

/// What kind of failure an Error is. Most errors are only shown (Unspecified); a code is set
/// where some caller acts on it, and travels with the Error when it is passed on (failure()).
enum class ErrorCode : std::uint8_t {
    Unspecified = 0,  // a sentence for a person; no caller branches on it
    InvalidArgument,  // the request or input is malformed (a field, flag or argument)
    NotFound,         // what was named does not exist (a run, a model)
    AlreadyExists,    // what was to be created exists already
    Unavailable,      // not now: trying again later can succeed (a run still starting)
    Busy,             // another connection holds the SQLite lock (SQLITE_BUSY / SQLITE_LOCKED)
    Unauthenticated,  // the peer refused our credentials, or we refused its certificate
};

/// The code's name ("busy", "not_found", ...), for logs and tests.
constexpr const char* toString(ErrorCode code) {
    switch (code) {
        case ErrorCode::Unspecified:
            return "unspecified";
        case ErrorCode::InvalidArgument:
            return "invalid_argument";
        case ErrorCode::NotFound:
            return "not_found";
        case ErrorCode::AlreadyExists:
            return "already_exists";
        case ErrorCode::Unavailable:
            return "unavailable";
        case ErrorCode::Busy:
            return "busy";
        case ErrorCode::Unauthenticated:
            return "unauthenticated";
    }
    return "?";
}

struct Error {
    std::string message;
    ErrorCode code = ErrorCode::Unspecified;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : m_state(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : m_state(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<T>(m_state); }
    T& value() & { return std::get<T>(m_state); }
    T&& value() && { return std::get<T>(std::move(m_state)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }
    /// The error's sentence (only when !ok()).
    const std::string& error() const { return failure().message; }
    /// The error's code (only when !ok()).
    ErrorCode code() const { return failure().code; }
    /// The whole error, to pass on with its code: `return r.failure();`.
    const Error& failure() const { return std::get<Error>(m_state); }

  private:
    std::variant<T, Error> m_state;
};

/// Status: success, or an Error.
class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(Error error) : m_error(std::move(error)) {}  // NOLINT(google-explicit-constructor)
    static Status okStatus() { return {}; }
    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string& error() const { return m_error->message; }
    ErrorCode code() const { return m_error->code; }
    const Error& failure() const { return *m_error; }

  private:
    std::optional<Error> m_error;
};

}  // namespace runplane
