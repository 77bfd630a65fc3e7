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
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

namespace runplane::agent {
namespace {

// A request (its head and any body) must arrive whole within this long of the connection being
// ready for it (accepted, or its previous response sent): a slow sender cannot hold a slot by
// trickling bytes, and an idle kept-alive connection is closed after it.
constexpr int kRequestDeadlineMs = 5000;
constexpr int kWriteDeadlineMs = 5000;  // a response must be taken by the client within this
constexpr int kMaxRequestsPerConnection = 100;
constexpr std::size_t kMaxHeadBytes = 8192;
constexpr std::size_t kMaxBodyBytes = 8192;
// Connections held at once, in all and from one peer address. Past either cap the peer's (or
// anyone's) oldest connection still waiting for its request is closed for the new one, so idle
// sockets can never lock a scraper out (docs/security.md, "Red-team round (issue 41): daemon").
constexpr std::size_t kMaxConnections = 128;
constexpr std::size_t kMaxConnectionsPerPeer = 16;

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
    enum class Phase { Handshake, Reading, Writing };
    int fd = -1;
    SSL* ssl = nullptr;
    std::string peer;
    Phase phase = Phase::Reading;
    bool wantWrite = false;  // TLS: the pending handshake or read needs the socket writable
    bool wantRead = false;   // TLS: the pending write needs the socket readable
    bool closeAfterWrite = false;
    bool dead = false;
    int served = 0;
    std::uint64_t order = 0;  // accept order: the oldest waiting connection is evicted first
    std::chrono::steady_clock::time_point deadline;
    std::string buffer;  // bytes received and not yet consumed
    std::string out;     // the response being written
    std::size_t outDone = 0;
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

SSL_CTX* tlsContext(const MetricsWebConfig& web, std::string* error) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == nullptr) {
        *error = "cannot set up TLS";
        return nullptr;
    }
    // TLS 1.2 is the floor, as for the gRPC port (docs/security.md).
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    // Non-blocking sockets: a write may take part of the response and be resumed later.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
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
    if (m_thread.joinable()) {
        m_thread.join();
    }
    ::close(m_listenFd);
    ::close(m_stopFd);
    SSL_CTX_free(m_ssl);
}

// One thread serves every connection, none of them blocking: sockets are non-blocking and each
// connection is a small state machine (TLS handshake, reading a request, writing a response)
// driven by poll. A connection that sends nothing only holds its slot until its deadline, and
// the caps evict the oldest waiting connection, so idle or slow clients never delay a scrape.
void MetricsServer::serve() {
    std::vector<std::unique_ptr<Connection>> conns;
    std::vector<pollfd> fds;
    std::uint64_t accepted = 0;
    while (true) {
        std::erase_if(conns, [this](const std::unique_ptr<Connection>& c) {
            if (c->dead) {
                closeConnection(*c);
            }
            return c->dead;
        });
        const auto now = std::chrono::steady_clock::now();
        int timeoutMs = -1;
        fds.clear();
        fds.push_back({m_listenFd, POLLIN, 0});
        fds.push_back({m_stopFd, POLLIN, 0});
        for (const auto& c : conns) {
            short events = 0;
            if (c->phase == Connection::Phase::Writing) {
                events = c->wantRead ? POLLIN : POLLOUT;
            } else {
                events = c->wantWrite ? POLLOUT : POLLIN;
            }
            fds.push_back({c->fd, events, 0});
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(c->deadline - now).count();
            const int ms = static_cast<int>(std::max<long long>(0, left) + 1);
            timeoutMs = timeoutMs < 0 ? ms : std::min(timeoutMs, ms);
        }
        int ready;
        do {
            ready = ::poll(fds.data(), fds.size(), timeoutMs);
        } while (ready < 0 && errno == EINTR);
        if (ready < 0 || fds[1].revents != 0) {
            break;
        }
        for (std::size_t i = 0; i < conns.size(); ++i) {
            if (fds[i + 2].revents != 0 && !conns[i]->dead) {
                step(*conns[i]);
            }
        }
        const auto after = std::chrono::steady_clock::now();
        for (auto& c : conns) {
            if (!c->dead && after >= c->deadline) {
                c->dead = true;  // its request (or the taking of its response) took too long
            }
        }
        if (fds[0].revents != 0) {
            acceptAll(conns, accepted);
        }
    }
    for (auto& c : conns) {
        closeConnection(*c);
    }
}

void MetricsServer::acceptAll(std::vector<std::unique_ptr<Connection>>& conns,
                              std::uint64_t& accepted) {
    for (int i = 0; i < 256; ++i) {  // bounded, so a connect flood cannot starve the others
        sockaddr_storage addr{};
        socklen_t len = sizeof(addr);
        const int fd = ::accept4(m_listenFd, reinterpret_cast<sockaddr*>(&addr), &len,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                errno != ECONNABORTED) {
                ::poll(nullptr, 0, 100);  // out of descriptors: do not spin
            }
            return;
        }
        auto c = std::make_unique<Connection>();
        c->fd = fd;
        c->peer = peerName(addr);
        c->order = ++accepted;
        c->deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestDeadlineMs);
        const int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
        // Room for the new one: the oldest connection still waiting for its request goes, first
        // among the peer's own, then among all.
        const auto evictOldest = [&](const std::string* peer) {
            Connection* victim = nullptr;
            for (auto& other : conns) {
                if (other->dead || other->phase == Connection::Phase::Writing ||
                    (peer != nullptr && other->peer != *peer)) {
                    continue;
                }
                if (victim == nullptr || other->order < victim->order) {
                    victim = other.get();
                }
            }
            if (victim != nullptr) {
                victim->dead = true;
                ++m_evicted;
            }
            return victim != nullptr;
        };
        std::size_t live = 0, fromPeer = 0;
        for (const auto& other : conns) {
            live += other->dead ? 0 : 1;
            fromPeer += (!other->dead && other->peer == c->peer) ? 1 : 0;
        }
        bool room = true;
        if (fromPeer >= kMaxConnectionsPerPeer) {
            room = evictOldest(&c->peer);
        } else if (live >= kMaxConnections) {
            room = evictOldest(nullptr);
        }
        if (!room) {
            ::close(fd);  // every slot is writing a response: the client may retry
            ++m_evicted;
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (m_evicted > 0 && now - m_lastEvictionLog > std::chrono::seconds(60)) {
            m_logger.warn("/metrics: " + std::to_string(m_evicted) +
                          " idle or slow connections closed to make room (at most " +
                          std::to_string(kMaxConnectionsPerPeer) + " per peer and " +
                          std::to_string(kMaxConnections) + " in all; the latest from " + c->peer +
                          ")");
            m_lastEvictionLog = now;
            m_evicted = 0;
        }
        if (m_ssl != nullptr) {
            c->ssl = SSL_new(m_ssl);
            if (c->ssl == nullptr || SSL_set_fd(c->ssl, fd) != 1) {
                closeConnection(*c);
                continue;
            }
            SSL_set_accept_state(c->ssl);
            c->phase = Connection::Phase::Handshake;
        }
        conns.push_back(std::move(c));
        step(*conns.back());
        if (conns.back()->dead) {
            closeConnection(*conns.back());
            conns.pop_back();
        }
    }
}

void MetricsServer::closeConnection(Connection& c) {
    if (c.ssl != nullptr) {
        if (c.phase != Connection::Phase::Handshake) {
            SSL_shutdown(c.ssl);  // close_notify, best effort (non-blocking)
        }
        SSL_free(c.ssl);
        c.ssl = nullptr;
        ERR_clear_error();
    }
    if (c.fd >= 0) {
        ::close(c.fd);
        c.fd = -1;
    }
}

void MetricsServer::step(Connection& c) {
    if (c.phase == Connection::Phase::Handshake) {
        const int r = SSL_accept(c.ssl);
        if (r != 1) {
            const int err = SSL_get_error(c.ssl, r);
            ERR_clear_error();
            if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
                c.wantWrite = err == SSL_ERROR_WANT_WRITE;
                return;
            }
            c.dead = true;  // a failed handshake (wrong protocol version, no client cert, ...)
            return;
        }
        c.wantWrite = false;
        c.phase = Connection::Phase::Reading;
    }
    // Reading and writing alternate while requests arrive pipelined in one read.
    for (int rounds = 0; rounds < kMaxRequestsPerConnection && !c.dead; ++rounds) {
        if (c.phase == Connection::Phase::Reading) {
            if (!readAvailable(c)) {
                c.dead = true;  // end of stream or an error
                return;
            }
            if (!takeRequest(c)) {
                return;  // the request is not whole yet
            }
            c.phase = Connection::Phase::Writing;
            c.deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(kWriteDeadlineMs);
        }
        if (!writeAvailable(c)) {
            c.dead = true;
            return;
        }
        if (c.outDone < c.out.size()) {
            return;  // the socket is full: poll says when to go on
        }
        c.out.clear();
        c.outDone = 0;
        ++c.served;
        if (c.closeAfterWrite) {
            c.dead = true;
            return;
        }
        c.phase = Connection::Phase::Reading;
        c.deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(kRequestDeadlineMs);
    }
}

// Everything the socket has now into c.buffer; false on end of stream or error. Stops early
// when the buffer already holds more than any acceptable request.
bool MetricsServer::readAvailable(Connection& c) {
    char chunk[4096];
    while (c.buffer.size() <= kMaxHeadBytes + kMaxBodyBytes + 4) {
        if (c.ssl != nullptr) {
            const int n = SSL_read(c.ssl, chunk, sizeof(chunk));
            if (n > 0) {
                c.buffer.append(chunk, static_cast<std::size_t>(n));
                continue;
            }
            const int err = SSL_get_error(c.ssl, n);
            ERR_clear_error();
            if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
                c.wantWrite = err == SSL_ERROR_WANT_WRITE;
                return true;
            }
            return false;
        }
        const ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
        if (n > 0) {
            c.buffer.append(chunk, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return true;
        }
        // End of stream: a request already whole in the buffer is still answered.
        return c.buffer.find("\r\n\r\n") != std::string::npos;
    }
    return true;
}

// As much of c.out as the socket takes now; false on error.
bool MetricsServer::writeAvailable(Connection& c) {
    while (c.outDone < c.out.size()) {
        const std::size_t left = c.out.size() - c.outDone;
        if (c.ssl != nullptr) {
            const int n = SSL_write(c.ssl, c.out.data() + c.outDone,
                                    static_cast<int>(std::min<std::size_t>(left, 1 << 30)));
            if (n > 0) {
                c.outDone += static_cast<std::size_t>(n);
                continue;
            }
            const int err = SSL_get_error(c.ssl, n);
            ERR_clear_error();
            if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
                c.wantRead = err == SSL_ERROR_WANT_READ;
                return true;
            }
            return false;
        }
        const ssize_t n = ::send(c.fd, c.out.data() + c.outDone, left, MSG_NOSIGNAL);
        if (n > 0) {
            c.outDone += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    c.wantRead = false;
    return true;
}

// When c.buffer holds a whole request: consumes it, puts the response into c.out and returns
// true. False while more bytes are needed.
bool MetricsServer::takeRequest(Connection& c) {
    const auto respond = [&](int status, const std::string& body, bool keepAlive,
                             const std::string& extraHeaders, bool withBody) {
        c.out = "HTTP/1.1 " + std::to_string(status) + ' ' + reasonPhrase(status) +
                "\r\nContent-Type: " +
                (status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain") +
                "\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: " + (keepAlive ? "keep-alive" : "close") + "\r\n" + extraHeaders +
                "\r\n";
        if (withBody) {
            c.out += body;
        }
        c.outDone = 0;
        c.closeAfterWrite = !keepAlive;
        return true;
    };

    // The request head: request line and header fields, up to an empty line.
    const std::size_t headEnd = c.buffer.find("\r\n\r\n");
    if (headEnd == std::string::npos && c.buffer.size() <= kMaxHeadBytes) {
        return false;
    }
    if (headEnd == std::string::npos || headEnd > kMaxHeadBytes) {
        c.buffer.clear();
        return respond(431, "runplaned: request header too large\n", false, "", true);
    }
    std::istringstream head(c.buffer.substr(0, headEnd));
    std::string line, method, target, version;
    std::getline(head, line);
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    std::istringstream requestLine(line);
    requestLine >> method >> target >> version;
    if (method.empty() || target.empty() || version.rfind("HTTP/1.", 0) != 0) {
        c.buffer.clear();
        return respond(400, "runplaned: not an HTTP/1.x request\n", false, "", true);
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
            c.buffer.clear();
            return respond(400, "runplaned: malformed header field\n", false, "", true);
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
        c.buffer.clear();
        return respond(413, "runplaned: /metrics takes no request body\n", false, "", true);
    }
    if (c.buffer.size() < headEnd + 4 + contentLength) {
        return false;  // a body nobody needs: wait for it, then drop it
    }
    c.buffer.erase(0, headEnd + 4 + contentLength);

    bool keepAlive = version == "HTTP/1.1" ? connection.find("close") == std::string::npos
                                           : connection.find("keep-alive") != std::string::npos;
    keepAlive = keepAlive && c.served + 1 < kMaxRequestsPerConnection;
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
