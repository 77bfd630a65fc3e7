// A stand-in for an inference engine's process in the engine-metrics tests (issue 42): started
// with an engine's command line (`python3 -m sglang.launch_server ... --port N`,
// `vllm serve MODEL --port=N`; argv[0] is whatever the test passes to execv), it serves the file
// named by RUNPLANE_FAKE_METRICS_FILE at http://127.0.0.1:N/metrics with cpp-httplib until it is
// killed. The body is a real engine's exposition (tests/agent/fixtures/prometheus).
//
// Without --port (an engine whose server a Ray actor starts, issue 42's socket scan): the server
// listens on 127.0.0.1:<ephemeral> and writes the port to RUNPLANE_FAKE_PORT_FILE. With
// RUNPLANE_FAKE_SERVE_IN_CHILD=1 the process (the "actor") serves nothing itself: it re-executes
// this program as a child under a multiprocessing-spawn command line (as SGLang's
// launch_server_process does), which serves. With RUNPLANE_FAKE_SIDE_DIR=DIR the process also
// listens on two non-HTTP sockets: `zmtp` answers each connection with the 10-byte ZMTP 3
// greeting signature (rfc.zeromq.org/spec/23), reads what the peer sent and closes it, `silent`
// accepts and never writes; each writes its port to DIR/NAME.port and its number of accepted
// connections to DIR/NAME.accepts.
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace {

void writeFile(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << text;
    std::rename(tmp.c_str(), path.c_str());
}

int listenLoopback() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd, 16) != 0) {
        return -1;
    }
    return fd;
}

int portOf(int fd) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    return ntohs(addr.sin_port);
}

// A non-HTTP listener: `greeting` written to each connection, then closed; empty: the
// connection is held open, nothing written, until the peer closes it.
void sideSocket(const std::string& dir, const std::string& name, std::string greeting) {
    const int fd = listenLoopback();
    if (fd < 0) {
        std::fprintf(stderr, "fake_engine_server: %s: cannot listen\n", name.c_str());
        std::exit(1);
    }
    writeFile(dir + "/" + name + ".accepts", "0");
    writeFile(dir + "/" + name + ".port", std::to_string(portOf(fd)));
    std::thread([fd, dir, name, greeting] {
        int accepts = 0;
        while (true) {
            const int c = ::accept(fd, nullptr, nullptr);
            if (c < 0) {
                continue;
            }
            writeFile(dir + "/" + name + ".accepts", std::to_string(++accepts));
            if (!greeting.empty()) {
                // As a ZMQ peer: its greeting, then the peer's bytes read (a wrong signature:
                // the connection is closed).
                (void)!::write(c, greeting.data(), greeting.size());
                char buf[256];
                (void)!::read(c, buf, sizeof buf);
                ::close(c);
                continue;
            }
            std::thread([c] {
                char buf[256];
                while (::read(c, buf, sizeof buf) > 0) {
                }
                ::close(c);
            }).detach();
        }
    }).detach();
}

}  // namespace

int main(int argc, char** argv) {
    int port = 0;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        std::string_view v;
        if (a == "--port" && i + 1 < argc) {
            v = argv[i + 1];
        } else if (a.starts_with("--port=")) {
            v = a.substr(7);
        } else {
            continue;
        }
        std::from_chars(v.data(), v.data() + v.size(), port);
    }
    const char* file = std::getenv("RUNPLANE_FAKE_METRICS_FILE");
    const char* portFile = std::getenv("RUNPLANE_FAKE_PORT_FILE");
    if (port < 0 || port > 65535 || file == nullptr || (port == 0 && portFile == nullptr)) {
        std::fprintf(stderr,
                     "fake_engine_server: needs --port N or RUNPLANE_FAKE_PORT_FILE, and "
                     "RUNPLANE_FAKE_METRICS_FILE\n");
        return 2;
    }
    if (const char* side = std::getenv("RUNPLANE_FAKE_SIDE_DIR")) {
        ::unsetenv("RUNPLANE_FAKE_SIDE_DIR");  // the child serves HTTP only
        sideSocket(side, "zmtp", std::string("\xff\0\0\0\0\0\0\0\x01\x7f", 10));
        sideSocket(side, "silent", "");
    }
    if (const char* inChild = std::getenv("RUNPLANE_FAKE_SERVE_IN_CHILD");
        inChild != nullptr && std::string_view(inChild) == "1") {
        ::unsetenv("RUNPLANE_FAKE_SERVE_IN_CHILD");
        const pid_t child = ::fork();
        if (child == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            std::string a0 = "python3", a1 = "-c",
                        a2 = "from multiprocessing.spawn import spawn_main; "
                             "spawn_main(tracker_fd=5, pipe_handle=7)",
                        a3 = "--multiprocessing-fork";
            char* args[] = {a0.data(), a1.data(), a2.data(), a3.data(), nullptr};
            ::execv("/proc/self/exe", args);
            ::_exit(127);
        }
        while (true) {
            ::pause();
        }
    }
    std::ifstream in(file);
    if (!in) {
        std::fprintf(stderr, "fake_engine_server: %s: cannot read\n", file);
        return 2;
    }
    std::stringstream body;
    body << in.rdbuf();
    const std::string text = body.str();
    httplib::Server server;
    server.Get("/metrics", [&text](const httplib::Request&, httplib::Response& res) {
        res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
    });
    if (port == 0) {
        port = server.bind_to_any_port("127.0.0.1");
        if (port <= 0) {
            std::fprintf(stderr, "fake_engine_server: cannot listen on 127.0.0.1\n");
            return 1;
        }
        writeFile(portFile, std::to_string(port));
        return server.listen_after_bind() ? 0 : 1;
    }
    if (!server.listen("127.0.0.1", port)) {
        std::fprintf(stderr, "fake_engine_server: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    return 0;
}
