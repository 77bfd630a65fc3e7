#include "db/imports/content_hash.h"

#include <openssl/evp.h>

namespace runplane::imports {

struct ContentHash::Impl {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Impl() { EVP_MD_CTX_free(ctx); }
};

ContentHash::ContentHash() : m_impl(std::make_unique<Impl>()) {
    EVP_DigestInit_ex(m_impl->ctx, EVP_sha256(), nullptr);
}

ContentHash::~ContentHash() = default;

void ContentHash::update(const void* data, std::size_t size) {
    EVP_DigestUpdate(m_impl->ctx, data, size);
}

std::string ContentHash::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(m_impl->ctx, digest, &size);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(size * 2);
    for (unsigned int i = 0; i < size; ++i) {
        out += kHex[digest[i] >> 4];
        out += kHex[digest[i] & 0xf];
    }
    return out;
}

}  // namespace runplane::imports
