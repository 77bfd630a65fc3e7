// Human sentences for failed RPCs (no gRPC headers needed: codes are mirrored in RpcCode).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "backend/control/node_client.h"

namespace runplane::control {

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

bool contains(const std::string& haystack, const char* needle) {
    return haystack.find(needle) != std::string::npos;
}

// The most specific transport cause gRPC buried in its message, in plain words.
std::string transportCause(const std::string& grpcMessage) {
    const std::string m = lower(grpcMessage);
    if (contains(m, "connection refused")) {
        return "connection refused";
    }
    if (contains(m, "connection reset")) {
        return "connection reset by peer";
    }
    if (contains(m, "dns") || contains(m, "name resolution") || contains(m, "resolve") ||
        contains(m, "not known")) {
        return "cannot resolve the host name";
    }
    if (contains(m, "timed out") || contains(m, "timeout")) {
        return "connection timed out";
    }
    if (contains(m, "socket closed") || contains(m, "goaway") || contains(m, "eof") ||
        contains(m, "broken pipe")) {
        return "the connection was closed";
    }
    if (contains(m, "ssl") || contains(m, "tls") || contains(m, "certificate")) {
        return "TLS handshake failed (" + grpcMessage + ")";
    }
    // gRPC calls every connection set-up a handshake, plaintext too: a daemon that is starting
    // or stopping closes it. That is unavailability, not a TLS problem.
    if (contains(m, "handshake")) {
        return "unavailable (the connection closed while it was being set up; is the daemon "
               "starting or stopping?)";
    }
    return grpcMessage.empty() ? std::string("unavailable") : grpcMessage;
}

}  // namespace

std::string describeRpcError(const std::string& address, const std::string& method, RpcCode code,
                             const std::string& grpcMessage) {
    const std::string daemon = "runplaned at " + address;
    const std::string detail = grpcMessage.empty() ? std::string() : ": " + grpcMessage;
    switch (code) {
        case RpcCode::Ok:
            return {};
        case RpcCode::Unavailable:
            return "cannot reach " + daemon + ": " + transportCause(grpcMessage);
        case RpcCode::DeadlineExceeded:
            return daemon + " did not answer " + method + " in time (deadline exceeded)";
        case RpcCode::Cancelled:
            return method + " to " + daemon + " was cancelled";
        case RpcCode::Unauthenticated:
        case RpcCode::PermissionDenied:
            return daemon + " refused " + method + ": " + kAuthenticationFailed + detail;
        case RpcCode::Unimplemented:
            return daemon + " does not implement " + method + " (an older or different daemon?)";
        case RpcCode::InvalidArgument:
        case RpcCode::FailedPrecondition:
        case RpcCode::NotFound:
        case RpcCode::AlreadyExists:
        case RpcCode::OutOfRange:
            return daemon + " rejected " + method + detail;
        case RpcCode::ResourceExhausted:
            return daemon + " rejected " + method + " (resource exhausted or message too large)" +
                   detail;
        default:
            return method + " to " + daemon + " failed (gRPC code " +
                   std::to_string(static_cast<int>(code)) + ")" + detail;
    }
}

std::string describeProtocolMismatch(const std::string& address, std::uint32_t daemonVersion) {
    return "daemon at " + address + " speaks protocol v" + std::to_string(daemonVersion) +
           ", this controller speaks v" + std::to_string(kProtocolVersion);
}

ErrorCode errorCodeOf(RpcCode code) {
    switch (code) {
        case RpcCode::Unauthenticated:
        case RpcCode::PermissionDenied:
            return ErrorCode::Unauthenticated;
        case RpcCode::NotFound:
            return ErrorCode::NotFound;
        case RpcCode::AlreadyExists:
            return ErrorCode::AlreadyExists;
        case RpcCode::InvalidArgument:
            return ErrorCode::InvalidArgument;
        case RpcCode::Unavailable:
            return ErrorCode::Unavailable;
        default:
            return ErrorCode::Unspecified;
    }
}

Error rpcFailure(const std::string& address, const std::string& method, RpcCode code,
                 const std::string& grpcMessage) {
    return Error{describeRpcError(address, method, code, grpcMessage), errorCodeOf(code)};
}

bool isLoopbackAddress(const std::string& address) {
    std::string host = address;
    if (!host.empty() && host.front() == '[') {
        const auto close = host.find(']');
        host = close == std::string::npos ? host : host.substr(1, close - 1);
        return host == "::1";
    }
    if (const auto colon = host.rfind(':'); colon != std::string::npos) {
        host = host.substr(0, colon);
    }
    if (host == "localhost") {
        return true;
    }
    // 127.0.0.0/8 in dotted quad form.
    int parts[4] = {-1, -1, -1, -1};
    char tail = 0;
    if (std::sscanf(host.c_str(), "%d.%d.%d.%d%c", &parts[0], &parts[1], &parts[2], &parts[3],
                    &tail) != 4) {
        return false;
    }
    for (int part : parts) {
        if (part < 0 || part > 255) {
            return false;
        }
    }
    return parts[0] == 127;
}

}  // namespace runplane::control
