#pragma once
// Certificates for a secured cluster (`runplanectl cluster init`): an EC P-256 CA, per-host
// server certificates, a client certificate for mutual TLS and a bearer token, made with the
// OpenSSL library (no shell-out). No OpenSSL type appears in this header.

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"

namespace runplane::control {

/// A PEM certificate and its PEM private key.
struct CertPair {
    std::string certPem;
    std::string keyPem;
};

/// Validity window relative to now, in seconds (negative = in the past; tests make expired
/// certificates with both negative).
struct Validity {
    long notBeforeSeconds = -60;  // a minute of clock skew
    long notAfterSeconds = 365L * 24 * 3600;
};

/// A self-signed CA (basicConstraints CA:TRUE, keyCertSign).
Result<CertPair> makeCertificateAuthority(const std::string& commonName, Validity validity = {});

/// A certificate signed by `ca`. `hosts` become subjectAltNames (IP literals as IP, anything
/// else as DNS); `server` picks serverAuth or clientAuth as the extended key usage.
Result<CertPair> makeSignedCertificate(const CertPair& ca, const std::string& commonName,
                                       const std::vector<std::string>& hosts, bool server,
                                       Validity validity = {});

/// 32 random bytes as 64 hex characters (OpenSSL's CSPRNG).
Result<std::string> makeToken();

/// "" when the PEM certificate is valid now, else why not, e.g. "expired on 2026-01-02 10:00 UTC".
std::string certificateTimeProblem(const std::string& certPem);

/// What `runplanectl cluster init` writes.
struct ClusterInitOptions {
    std::vector<std::string> hosts;  // host names or IP literals, optionally HOST:PORT
    std::string outDir;
    std::string name = "cluster";
    int days = 365;
    int defaultPort = 7070;
    /// Replace the files of a cluster already in outDir (its CA key, token, ...). Without it
    /// init refuses when any file it would write exists (issue 41).
    bool force = false;
};
struct ClusterInitResult {
    std::string profilePath;
    /// One line per host: the runplaned flags to use there.
    std::vector<std::string> daemonCommands;
};
/// Writes ca.pem, ca.key, server-HOST.{pem,key}, client.{pem,key}, token and NAME.yaml into
/// outDir (created 0700; keys and token 0600). Refuses, naming them, when any of those files
/// exists already (another cluster's CA key or token), unless options.force.
Result<ClusterInitResult> initCluster(const ClusterInitOptions& options);

}  // namespace runplane::control
