#pragma once
// SHA-256 over the files of an imported run (its identity, docs/imports.md).

#include <cstddef>
#include <memory>
#include <string>

namespace runplane::imports {

class ContentHash {
  public:
    ContentHash();
    ~ContentHash();
    ContentHash(const ContentHash&) = delete;
    ContentHash& operator=(const ContentHash&) = delete;
    void update(const void* data, std::size_t size);
    /// Lower-case hex of the digest; the hash cannot be updated afterwards.
    std::string hex();

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace runplane::imports
