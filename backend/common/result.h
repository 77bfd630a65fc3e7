#pragma once
// Result<T>: a value or an error message, for fallible functions across library boundaries.
// Exceptions never cross a library boundary in Runplane; grpc::Status exists only at the RPC
// edge. Errors are human sentences that name the place (file:line:column, field, flag).

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace runplane {

struct Error {
    std::string message;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::move(value)) {}  // NOLINT(google-explicit-constructor)
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
    const std::string& error() const { return std::get<Error>(m_state).message; }

private:
    std::variant<T, Error> m_state;
};

/// Status: success, or an error message.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error error) : m_error(std::move(error.message)) {}  // NOLINT
    static Status okStatus() { return {}; }
    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string& error() const { return *m_error; }

private:
    std::optional<std::string> m_error;
};

}  // namespace runplane
