// A stand-in for an inference engine's process in the engine-metrics tests (issue 42): started
// with an engine's command line (`python3 -m sglang.launch_server ... --port N`,
// `vllm serve MODEL --port=N`; argv[0] is whatever the test passes to execv), it serves the file
// named by RUNPLANE_FAKE_METRICS_FILE at http://127.0.0.1:N/metrics with cpp-httplib until it is
// killed. The body is a real engine's exposition (tests/agent/fixtures/prometheus).
#include <httplib.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

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
    if (port <= 0 || port > 65535 || file == nullptr) {
        std::fprintf(stderr, "fake_engine_server: needs --port N and RUNPLANE_FAKE_METRICS_FILE\n");
        return 2;
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
    if (!server.listen("127.0.0.1", port)) {
        std::fprintf(stderr, "fake_engine_server: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    return 0;
}
