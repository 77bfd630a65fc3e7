#pragma once
// Test helper: a throw-away PKI made with the openssl command: a CA, a server certificate for
// localhost/127.0.0.1 and a client certificate, all EC P-256, valid two days.

#include <fstream>
#include <string>
#include <vector>

#include "tests/agent/daemon_process.h"

namespace runplane::agent::testing {

inline bool haveOpenssl() {
    return testing::runCommand({"openssl", "version"}, nullptr) == 0;
}

// Self-signed CA + server cert for localhost/127.0.0.1 (+ a client cert) with openssl.
struct Pki {
    explicit Pki(const std::string& dir) : dir(dir) {
        auto run = [&](std::vector<std::string> argv) {
            std::string out;
            const int rc = testing::runCommand(argv, &out);
            if (rc != 0) {
                error += out;
            }
        };
        run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem", "-days", "2", "-subj",
             "/CN=runplane-test-ca"});
        std::ofstream(dir + "/san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
        for (const std::string who : {"server", "client"}) {
            run({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-keyout", dir + "/" + who + ".key", "-out", dir + "/" + who + ".csr",
                 "-subj", "/CN=" + std::string(who == "server" ? "localhost" : "runplane-client")});
            run({"openssl", "x509", "-req", "-in", dir + "/" + who + ".csr", "-CA", dir + "/ca.pem",
                 "-CAkey", dir + "/ca.key", "-CAcreateserial", "-out", dir + "/" + who + ".pem",
                 "-days", "2", "-extfile", dir + "/san.ext"});
        }
    }
    std::string file(const std::string& name) const { return testing::slurp(dir + "/" + name); }
    std::string dir;
    std::string error;
};

}  // namespace runplane::agent::testing
