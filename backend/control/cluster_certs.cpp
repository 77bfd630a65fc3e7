#include "backend/control/cluster_certs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

namespace runplane::control {

namespace {

namespace fs = std::filesystem;

template <typename T, void (*F)(T*)>
struct Deleter {
    void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

std::string sslError(const std::string& what) {
    const unsigned long code = ERR_get_error();
    char buf[256] = {};
    if (code != 0) {
        ERR_error_string_n(code, buf, sizeof buf);
    }
    ERR_clear_error();
    return what + (code != 0 ? std::string(": ") + buf : std::string());
}

bool isIpLiteral(const std::string& host) {
    unsigned char buf[16];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string bioText(BIO* bio) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(n));
}

Result<KeyPtr> readKey(const std::string& pem) {
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!key) {
        return Error{sslError("cannot read the private key")};
    }
    return key;
}

Result<CertPtr> readCert(const std::string& pem) {
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!cert) {
        return Error{sslError("cannot read the certificate")};
    }
    return cert;
}

bool addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext) {
        return false;
    }
    const bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

// Builds and signs one certificate; issuer == nullptr makes it self-signed.
Result<CertPair> build(const std::string& commonName, Validity validity, X509* issuer,
                       EVP_PKEY* issuerKey, const std::vector<std::pair<int, std::string>>& exts) {
    KeyPtr key(EVP_EC_gen("P-256"));
    CertPtr cert(X509_new());
    if (!key || !cert) {
        return Error{sslError("cannot make an EC P-256 key")};
    }
    X509_set_version(cert.get(), 2);
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) {
        return Error{sslError("no random bytes for the serial number")};
    }
    serial[0] &= 0x7f;  // positive
    BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), validity.notBeforeSeconds);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), validity.notAfterSeconds);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1,
                               0);
    X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
    for (const auto& [nid, value] : exts) {
        if (!addExtension(cert.get(), issuer ? issuer : cert.get(), nid, value)) {
            return Error{sslError("cannot add the certificate extension " + value)};
        }
    }
    if (X509_sign(cert.get(), issuerKey ? issuerKey : key.get(), EVP_sha256()) == 0) {
        return Error{sslError("cannot sign the certificate")};
    }
    BioPtr certBio(BIO_new(BIO_s_mem()));
    BioPtr keyBio(BIO_new(BIO_s_mem()));
    if (PEM_write_bio_X509(certBio.get(), cert.get()) != 1 ||
        PEM_write_bio_PrivateKey(keyBio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
            1) {
        return Error{sslError("cannot encode the certificate")};
    }
    return CertPair{bioText(certBio.get()), bioText(keyBio.get())};
}

// Writes a file with exactly `mode` (created fresh: no window with wider permissions).
Status writeFile(const std::string& path, const std::string& text, mode_t mode) {
    ::unlink(path.c_str());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        return Error{path + ": cannot create"};
    }
    ::fchmod(fd, mode);
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) {
            ::close(fd);
            return Error{path + ": cannot write"};
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
        return Error{path + ": cannot write"};
    }
    return {};
}

std::string timeText(const ASN1_TIME* t) {
    std::tm tm{};
    if (ASN1_TIME_to_tm(t, &tm) != 1) {
        return "?";
    }
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
    return buf;
}

// "host" or "host:port" (an IPv6 literal only bare or as [v6]:port).
Result<std::pair<std::string, int>> splitHost(const std::string& spec, int defaultPort) {
    std::string host = spec;
    int port = defaultPort;
    const auto colon = spec.rfind(':');
    const bool bareV6 = spec.find(':') != colon || isIpLiteral(spec);
    if (colon != std::string::npos && !bareV6) {
        host = spec.substr(0, colon);
        const std::string p = spec.substr(colon + 1);
        if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(p) < 1 || std::stoi(p) > 65535) {
            return Error{"--hosts '" + spec + "': port must be a number in 1..65535"};
        }
        port = std::stoi(p);
    }
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    if (host.empty() || host.size() > 253 ||
        host.find_first_of(" /\\'\"\t\n,") != std::string::npos) {
        return Error{"--hosts '" + spec + "' is not a host name or IP address"};
    }
    return std::pair{host, port};
}

}  // namespace

Result<CertPair> makeCertificateAuthority(const std::string& commonName, Validity validity) {
    return build(commonName, validity, nullptr, nullptr,
                 {{NID_basic_constraints, "critical,CA:TRUE"},
                  {NID_key_usage, "critical,keyCertSign,cRLSign"},
                  {NID_subject_key_identifier, "hash"}});
}

Result<CertPair> makeSignedCertificate(const CertPair& ca, const std::string& commonName,
                                       const std::vector<std::string>& hosts, bool server,
                                       Validity validity) {
    auto caCert = readCert(ca.certPem);
    if (!caCert.ok()) {
        return Error{"CA: " + caCert.error()};
    }
    auto caKey = readKey(ca.keyPem);
    if (!caKey.ok()) {
        return Error{"CA: " + caKey.error()};
    }
    std::vector<std::pair<int, std::string>> exts = {
        {NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
        {NID_ext_key_usage, server ? "serverAuth" : "clientAuth"},
        {NID_authority_key_identifier, "keyid"}};
    std::string san;
    for (const auto& host : hosts) {
        san += (san.empty() ? "" : ",") + std::string(isIpLiteral(host) ? "IP:" : "DNS:") + host;
    }
    if (!san.empty()) {
        exts.emplace_back(NID_subject_alt_name, san);
    }
    return build(commonName, validity, caCert->get(), caKey->get(), exts);
}

Result<std::string> makeToken() {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        return Error{sslError("no random bytes for the token")};
    }
    std::string hex;
    char buf[3];
    for (unsigned char b : bytes) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        hex += buf;
    }
    return hex;
}

std::string certificateTimeProblem(const std::string& certPem) {
    auto cert = readCert(certPem);
    if (!cert.ok()) {
        return cert.error();
    }
    if (X509_cmp_current_time(X509_get0_notAfter(cert->get())) < 0) {
        return "expired on " + timeText(X509_get0_notAfter(cert->get()));
    }
    if (X509_cmp_current_time(X509_get0_notBefore(cert->get())) > 0) {
        return "not valid before " + timeText(X509_get0_notBefore(cert->get()));
    }
    return {};
}

Result<ClusterInitResult> initCluster(const ClusterInitOptions& o) {
    if (o.hosts.empty()) {
        return Error{"--hosts: give at least one host"};
    }
    if (o.days < 1 || o.days > 3650) {
        return Error{"--days " + std::to_string(o.days) + ": must be in 1..3650"};
    }
    if (o.name.empty() || o.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                                                   "TUVWXYZ0123456789-_.") != std::string::npos) {
        return Error{"--name '" + o.name + "': use letters, digits, '-', '_' and '.'"};
    }
    std::vector<std::pair<std::string, int>> hosts;
    for (const auto& spec : o.hosts) {
        auto h = splitHost(spec, o.defaultPort);
        if (!h.ok()) {
            return Error{h.error()};
        }
        hosts.push_back(*h);
    }
    std::error_code ec;
    fs::create_directories(o.outDir, ec);
    if (ec || !fs::is_directory(o.outDir)) {
        return Error{"--out " + o.outDir + ": cannot create the directory"};
    }
    ::chmod(o.outDir.c_str(), 0700);
    const fs::path dir = fs::absolute(o.outDir);
    const std::string profilePath = (dir / (o.name + ".yaml")).string();
    // Every file init writes: one that exists belongs to a cluster already set up here (its
    // daemons trust that CA and token), whatever its profile is called.
    std::vector<std::string> files = {"ca.pem",     "ca.key", "client.pem",
                                      "client.key", "token",  o.name + ".yaml"};
    for (const auto& [host, port] : hosts) {
        files.push_back("server-" + host + ".pem");
        files.push_back("server-" + host + ".key");
    }
    std::string existing;
    for (const auto& file : files) {
        if (fs::exists(dir / file, ec) || fs::is_symlink(dir / file, ec)) {
            existing += (existing.empty() ? "" : ", ") + file;
        }
    }
    if (!existing.empty() && !o.force) {
        return Error{dir.string() + " holds a cluster already (" + existing +
                     "); refusing to replace a cluster's keys: its daemons trust that CA and "
                     "token. Choose another --out, or pass --force to replace them"};
    }
    Validity validity;
    validity.notAfterSeconds = static_cast<long>(o.days) * 24 * 3600;
    auto ca = makeCertificateAuthority("runplane " + o.name + " CA", validity);
    auto client = ca.ok() ? makeSignedCertificate(*ca, "runplanectl", {}, false, validity)
                          : Result<CertPair>(Error{ca.ok() ? "" : ca.error()});
    auto token = makeToken();
    if (!client.ok() || !token.ok()) {
        return Error{!client.ok() ? client.error() : token.error()};
    }
    auto put = [&](const std::string& file, const std::string& text, mode_t mode) {
        return writeFile((dir / file).string(), text, mode);
    };
    for (const auto& s :
         {put("ca.pem", ca->certPem, 0644), put("ca.key", ca->keyPem, 0600),
          put("client.pem", client->certPem, 0644), put("client.key", client->keyPem, 0600),
          put("token", *token + "\n", 0600)}) {
        if (!s.ok()) {
            return Error{s.error()};
        }
    }
    ClusterInitResult result;
    std::string yaml =
        "# runplane cluster profile written by `runplanectl cluster init`.\n"
        "# Relative paths resolve against this file's folder.\n"
        "nodes:\n";
    for (const auto& [host, port] : hosts) {
        auto server = makeSignedCertificate(*ca, host, {host}, true, validity);
        if (!server.ok()) {
            return Error{host + ": " + server.error()};
        }
        const std::string stem = "server-" + host;
        for (const auto& s : {put(stem + ".pem", server->certPem, 0644),
                              put(stem + ".key", server->keyPem, 0600)}) {
            if (!s.ok()) {
                return Error{s.error()};
            }
        }
        const std::string address =
            (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
            std::to_string(port);
        yaml += "  - address: \"" + address + "\"\n    name: \"" + host + "\"\n";
        result.daemonCommands.push_back(host + ": runplaned --listen " +
                                        (host.find(':') != std::string::npos ? "[::]" : "0.0.0.0") +
                                        ":" + std::to_string(port) + " --tls-cert " + stem +
                                        ".pem --tls-key " + stem +
                                        ".key --tls-client-ca ca.pem --token-file token");
    }
    yaml += "tls:\n  ca: ca.pem\n  cert: client.pem\n  key: client.key\ntoken_file: token\n";
    if (auto s = writeFile(profilePath, yaml, 0644); !s.ok()) {
        return Error{s.error()};
    }
    result.profilePath = profilePath;
    return result;
}

}  // namespace runplane::control
