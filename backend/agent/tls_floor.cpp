#include "backend/agent/tls_floor.h"

#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <string_view>

namespace runplane::agent {
namespace {

// The application section name keeps this apart from the system openssl.cnf's `openssl_conf`.
constexpr std::string_view kConfig =
    "runplaned_conf = runplaned_init\n"
    "[runplaned_init]\n"
    "ssl_conf = runplaned_ssl\n"
    "[runplaned_ssl]\n"
    "system_default = runplaned_tls_floor\n"
    "[runplaned_tls_floor]\n"
    "MinProtocol = TLSv1.2\n"
    "CipherString = DEFAULT:@SECLEVEL=2\n";  // Debian's system default, which this replaces

}  // namespace

Status enforceTlsFloor() {
    const int fd = ::memfd_create("runplaned-openssl.cnf", MFD_CLOEXEC);
    if (fd < 0) {
        return Error{"TLS floor: memfd_create failed"};
    }
    if (::write(fd, kConfig.data(), kConfig.size()) != static_cast<ssize_t>(kConfig.size())) {
        ::close(fd);
        return Error{"TLS floor: cannot write the OpenSSL configuration"};
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    // OpenSSL loads the system configuration on initialisation; loading the modules again
    // replaces its ssl_conf section.
    OPENSSL_init_ssl(0, nullptr);
    const int ok = CONF_modules_load_file(path.c_str(), "runplaned_conf", 0);
    ::close(fd);
    if (ok != 1) {
        return Error{"TLS floor: OpenSSL did not accept its configuration"};
    }
    // Check the effect instead of trusting it: a fresh context must refuse anything below 1.2.
    SSL_CTX* probe = SSL_CTX_new(TLS_server_method());
    const long floor = probe != nullptr ? SSL_CTX_get_min_proto_version(probe) : 0;
    SSL_CTX_free(probe);
    if (floor != TLS1_2_VERSION && floor != TLS1_3_VERSION) {
        return Error{"TLS floor: OpenSSL contexts still accept TLS below 1.2"};
    }
    return {};
}

}  // namespace runplane::agent
