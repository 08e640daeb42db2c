#pragma once

#include <string>
#include <utility>
#include <variant>

namespace emberline::engine {

// What went wrong, as a value. The engine never lets an exception cross a thread or library boundary: every
// fallible operation returns a Result, and the UI or CLI turns the Error into words for the user.
struct Error {
    enum class Code {
        Io,          // the file could not be opened or read
        Format,      // the bytes are not what they claim to be (corrupt gzip, corrupt protobuf, bad ids)
        Limit,       // input exceeds a sanity limit (decompressed size, element counts)
        Cancelled,   // the caller asked to stop
        Invalid,     // the caller passed an unusable argument
        Unsupported, // valid input that this build cannot handle
        Permission,  // the operating system refused
        Internal,
    };
    Code code = Code::Internal;
    std::string message;
};

template <typename T> class [[nodiscard]] Result {
public:
    Result(T value) : m_state(std::move(value)) {}
    Result(Error error) : m_state(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_state); }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<T>(m_state); }
    const T &value() const & { return std::get<T>(m_state); }
    T &&value() && { return std::get<T>(std::move(m_state)); }
    const Error &error() const { return std::get<Error>(m_state); }

    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }

private:
    std::variant<T, Error> m_state;
};

// Result for operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(Error::Code code, std::string message)
{
    return Error{code, std::move(message)};
}

} // namespace emberline::engine
