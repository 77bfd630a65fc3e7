#include "backend/agent/metrics_http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

namespace runplane::agent {
namespace {

// The limits cpp-httplib was configured with before this server replaced it.
constexpr int kReadTimeoutMs =
    2000;  // a request's bytes, and idle time between keep-alive requests
constexpr int kWriteTimeoutS = 5;
constexpr int kMaxRequestsPerConnection = 100;
constexpr std::size_t kMaxHeadBytes = 8192;
constexpr std::size_t kMaxBodyBytes = 8192;

// PEM text (read before the daemon dropped root) into the TLS context: the first certificate is
// the server's, the rest its chain.
std::unique_ptr<BIO, decltype(&BIO_free)> memoryBio(const std::string& pem) {
    return {BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free};
}

bool useCertificateChain(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    X509* leaf = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (leaf == nullptr) {
        return false;
    }
    const bool ok = SSL_CTX_use_certificate(&ctx, leaf) == 1;
    X509_free(leaf);
    while (X509* chain = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        SSL_CTX_add0_chain_cert(&ctx, chain);  // takes ownership
    }
    ERR_clear_error();  // the loop ends on an expected "no start line"
    return ok;
}

bool usePrivateKey(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (key == nullptr) {
        return false;
    }
    const bool ok = SSL_CTX_use_PrivateKey(&ctx, key) == 1 && SSL_CTX_check_private_key(&ctx) == 1;
    EVP_PKEY_free(key);
    return ok;
}

bool addClientCas(SSL_CTX& ctx, const std::string& pem) {
    auto bio = memoryBio(pem);
    X509_STORE* store = SSL_CTX_get_cert_store(&ctx);
    int added = 0;
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        added += X509_STORE_add_cert(store, ca) == 1 ? 1 : 0;
        X509_free(ca);
    }
    ERR_clear_error();
    return added > 0;
}

}  // namespace

struct MetricsServer::Connection {
    int fd = -1;
    SSL* ssl = nullptr;
    std::string peer;
    std::string buffer;  // bytes received and not yet consumed
};

namespace {

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) {
        return "";
    }
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

const char* reasonPhrase(int status) {
    switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 413:
            return "Payload Too Large";
        case 431:
            return "Request Header Fields Too Large";
        default:
            return "Error";
    }
}

std::string peerName(const sockaddr_storage& addr) {
    char text[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text,
                    sizeof(text));
    } else if (addr.ss_family == AF_INET6) {
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text,
                    sizeof(text));
    }
    return text;
}

bool writeAll(int fd, SSL* ssl, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const std::size_t left = data.size() - done;
        if (ssl != nullptr) {
            const int n = SSL_write(ssl, data.data() + done,
                                    static_cast<int>(std::min<std::size_t>(left, 1 << 30)));
            if (n <= 0) {
                return false;
            }
            done += static_cast<std::size_t>(n);
        } else {
            const ssize_t n = ::send(fd, data.data() + done, left, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                return false;  // the peer went away, or SO_SNDTIMEO ran out
            }
            done += static_cast<std::size_t>(n);
        }
    }
    return true;
}

SSL_CTX* tlsContext(const MetricsWebConfig& web, std::string* error) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr) {
        *error = "cannot set up TLS";
        return nullptr;
    }
    // TLS 1.2 is the floor, as for the gRPC port (docs/security.md).
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    if (!useCertificateChain(*ctx, web.certPem)) {
        *error = "tls_server_config.cert_file " + web.certFile + ": not a PEM certificate";
    } else if (!usePrivateKey(*ctx, web.keyPem)) {
        *error = "tls_server_config.key_file " + web.keyFile +
                 ": not the private key of cert_file " + web.certFile;
    } else if (!web.clientCaPem.empty()) {
        if (!addClientCas(*ctx, web.clientCaPem)) {
            *error = "tls_server_config.client_ca_file " + web.clientCaFile +
                     ": not a PEM certificate bundle";
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
        }
    }
    ERR_clear_error();
    if (!error->empty()) {
        SSL_CTX_free(ctx);
        return nullptr;
    }
    return ctx;
}

// A listening socket on host:port (port 0: the kernel picks one); -1 when none could be bound.
int listenOn(const std::string& host, int port, int* boundPort) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints,
                      &found) != 0) {
        return -1;
    }
    int fd = -1;
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            continue;
        }
        const int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd < 0) {
        return -1;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    *boundPort =
        ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(addr).sin6_port
                                         : reinterpret_cast<const sockaddr_in&>(addr).sin_port);
    return fd;
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const MetricsServerOptions& options,
                                                            std::function<std::string()> render,
                                                            Logger& logger) {
    const MetricsWebConfig& web = options.web;
    SSL_CTX* ssl = nullptr;
    if (web.tls()) {
        std::string sslError;
        ssl = tlsContext(web, &sslError);
        if (ssl == nullptr) {
            return Error{"--metrics-web-config: " + sslError};
        }
    }
    const std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
    int port = 0;
    const int listenFd = listenOn(host, options.port, &port);
    const int stopFd = listenFd < 0 ? -1 : ::eventfd(0, EFD_CLOEXEC);
    if (listenFd < 0 || stopFd < 0 || port <= 0) {
        if (listenFd >= 0) {
            ::close(listenFd);
        }
        SSL_CTX_free(ssl);
        return Error{"--metrics-listen " + options.host + ":" + std::to_string(options.port) +
                     ": cannot listen (address in use or not local?)"};
    }
    auto auth = std::make_shared<MetricsAuth>(web.basicAuthUsers, web.bearerToken);
    std::unique_ptr<MetricsServer> s(
        new MetricsServer(listenFd, stopFd, port, ssl, std::move(render), auth, logger));
    return s;
}

MetricsServer::MetricsServer(int listenFd, int stopFd, int port, SSL_CTX* ssl,
                             std::function<std::string()> render, std::shared_ptr<MetricsAuth> auth,
                             Logger& logger)
    : m_listenFd(listenFd),
      m_stopFd(stopFd),
      m_port(port),
      m_ssl(ssl),
      m_render(std::move(render)),
      m_auth(std::move(auth)),
      m_logger(logger) {
    m_thread = std::thread([this] { serve(); });
}

MetricsServer::~MetricsServer() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(m_stopFd, &one, sizeof(one));
    {
        // Wakes a read or TLS handshake blocked on the connection being served.
        std::lock_guard lock(m_connMutex);
        if (m_connFd >= 0) {
            ::shutdown(m_connFd, SHUT_RDWR);
        }
    }
    if (m_thread.joinable()) {
        m_thread.join();
    }
    ::close(m_listenFd);
    ::close(m_stopFd);
    SSL_CTX_free(m_ssl);
}

// One connection at a time (a scrape is cheap, and every thread costs the node resident memory):
// a keep-alive connection is served until it goes idle, and an idle one yields to a waiting client.
void MetricsServer::serve() {
    while (true) {
        pollfd fds[2] = {{m_listenFd, POLLIN, 0}, {m_stopFd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        sockaddr_storage addr{};
        socklen_t len = sizeof(addr);
        const int fd =
            ::accept4(m_listenFd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
                ::poll(nullptr, 0, 100);  // out of descriptors: do not spin
            }
            continue;
        }
        {
            std::lock_guard lock(m_connMutex);
            m_connFd = fd;
        }
        serveConnection(fd, peerName(addr));
        std::lock_guard lock(m_connMutex);
        ::close(fd);
        m_connFd = -1;
    }
}

void MetricsServer::serveConnection(int fd, const std::string& peer) {
    // Backstops for reads and writes that block inside OpenSSL (poll guards the plain ones).
    const timeval readTimeout{kReadTimeoutMs / 1000, (kReadTimeoutMs % 1000) * 1000};
    const timeval writeTimeout{kWriteTimeoutS, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &readTimeout, sizeof(readTimeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &writeTimeout, sizeof(writeTimeout));
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    Connection c;
    c.fd = fd;
    c.peer = peer;
    if (m_ssl != nullptr) {
        c.ssl = SSL_new(m_ssl);
        if (c.ssl == nullptr || SSL_set_fd(c.ssl, fd) != 1 || SSL_accept(c.ssl) != 1) {
            SSL_free(c.ssl);
            ERR_clear_error();
            return;  // a failed handshake (wrong protocol version, no client certificate, ...)
        }
    }
    for (int served = 0; served < kMaxRequestsPerConnection && handleRequest(c, served); ++served) {
    }
    if (c.ssl != nullptr) {
        SSL_shutdown(c.ssl);  // close_notify, best effort
        SSL_free(c.ssl);
        ERR_clear_error();
    }
}

bool MetricsServer::handleRequest(Connection& c, int served) {
    // More bytes into c.buffer; false on end of stream, error, timeout or stop. While waiting for
    // the next request of a kept-alive connection, a client waiting to connect ends the wait.
    const auto readMore = [&](bool idle) {
        if (c.ssl == nullptr || SSL_pending(c.ssl) == 0) {
            pollfd fds[3] = {{c.fd, POLLIN, 0}, {m_stopFd, POLLIN, 0}, {m_listenFd, POLLIN, 0}};
            int ready;
            do {
                ready = ::poll(fds, idle ? 3 : 2, kReadTimeoutMs);
            } while (ready < 0 && errno == EINTR);
            if (ready <= 0 || fds[1].revents != 0 || fds[0].revents == 0) {
                return false;
            }
        }
        char chunk[4096];
        if (c.ssl != nullptr) {
            const int n = SSL_read(c.ssl, chunk, sizeof(chunk));
            if (n <= 0) {
                ERR_clear_error();
                return false;
            }
            c.buffer.append(chunk, static_cast<std::size_t>(n));
            return true;
        }
        ssize_t n;
        do {
            n = ::recv(c.fd, chunk, sizeof(chunk), 0);
        } while (n < 0 && errno == EINTR);
        if (n <= 0) {
            return false;
        }
        c.buffer.append(chunk, static_cast<std::size_t>(n));
        return true;
    };
    const auto respond = [&](int status, const std::string& body, bool keepAlive,
                             const std::string& extraHeaders, bool withBody) {
        std::string out =
            "HTTP/1.1 " + std::to_string(status) + ' ' + reasonPhrase(status) +
            "\r\nContent-Type: " +
            (status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain") +
            "\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\nConnection: " + (keepAlive ? "keep-alive" : "close") + "\r\n" + extraHeaders +
            "\r\n";
        if (withBody) {
            out += body;
        }
        return writeAll(c.fd, c.ssl, out) && keepAlive;
    };

    // The request head: request line and header fields, up to an empty line.
    std::size_t headEnd;
    while ((headEnd = c.buffer.find("\r\n\r\n")) == std::string::npos &&
           c.buffer.size() <= kMaxHeadBytes) {
        if (!readMore(c.buffer.empty() && served > 0)) {
            return false;
        }
    }
    if (headEnd == std::string::npos || headEnd > kMaxHeadBytes) {
        respond(431, "runplaned: request header too large\n", false, "", true);
        return false;
    }
    std::istringstream head(c.buffer.substr(0, headEnd));
    c.buffer.erase(0, headEnd + 4);
    std::string line, method, target, version;
    std::getline(head, line);
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    std::istringstream requestLine(line);
    requestLine >> method >> target >> version;
    if (method.empty() || target.empty() || version.rfind("HTTP/1.", 0) != 0) {
        respond(400, "runplaned: not an HTTP/1.x request\n", false, "", true);
        return false;
    }
    std::string authorization, connection;
    std::size_t contentLength = 0;
    bool bodyTooLarge = false, chunked = false;
    while (std::getline(head, line)) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            respond(400, "runplaned: malformed header field\n", false, "", true);
            return false;
        }
        const std::string name = lower(trim(line.substr(0, colon)));
        const std::string value = trim(line.substr(colon + 1));
        if (name == "authorization") {
            authorization = value;
        } else if (name == "connection") {
            connection = lower(value);
        } else if (name == "content-length") {
            char* end = nullptr;
            const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
            bodyTooLarge = value.empty() || *end != '\0' || n > kMaxBodyBytes;
            contentLength = bodyTooLarge ? 0 : static_cast<std::size_t>(n);
        } else if (name == "transfer-encoding") {
            chunked = true;
        }
    }
    if (bodyTooLarge || chunked) {
        respond(413, "runplaned: /metrics takes no request body\n", false, "", true);
        return false;
    }
    while (c.buffer.size() < contentLength) {  // a body nobody needs: read and drop it
        if (!readMore(false)) {
            return false;
        }
    }
    c.buffer.erase(0, contentLength);

    bool keepAlive = version == "HTTP/1.1" ? connection.find("close") == std::string::npos
                                           : connection.find("keep-alive") != std::string::npos;
    keepAlive = keepAlive && served + 1 < kMaxRequestsPerConnection;
    const bool isHead = method == "HEAD";
    if (!m_auth->allowed(authorization)) {
        m_logger.warn("refused /metrics scrape from " + c.peer + ": " +
                      (authorization.empty() ? "no credentials" : "wrong credentials"));
        return respond(401, "runplaned: /metrics needs credentials (basic auth or bearer token)\n",
                       keepAlive, "WWW-Authenticate: Basic realm=\"runplaned metrics\"\r\n",
                       !isHead);
    }
    if (target.substr(0, target.find('?')) != "/metrics") {
        return respond(404, "runplaned: only /metrics is served here\n", keepAlive, "", !isHead);
    }
    if (method != "GET" && !isHead) {
        return respond(405, "runplaned: /metrics answers GET and HEAD\n", keepAlive,
                       "Allow: GET, HEAD\r\n", true);
    }
    return respond(200, m_render(), keepAlive, "", !isHead);
}

}  // namespace runplane::agent
