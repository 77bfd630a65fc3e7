#pragma once
// Start-up code out of the daemon's resident set. Start-up (gRPC's plugin registration, protobuf
// descriptors, flag parsing, SQLite's schema checks, ...) runs code the serving daemon never runs
// again, and the kernel maps file pages in 64 KiB windows around each one touched (fault-around),
// so ~8 MB of runplaned's 11.5 MB of text stays mapped while ~1.5 MB of it is used (measured,
// docs/performance.md). Once serving, the daemon unmaps its own read-only segments (code,
// constants, unwind tables) with madvise(MADV_DONTNEED); what it runs afterwards faults back
// from the page cache. Those segments are never written (no PF_W; a segment with any private
// page, as a debugger's breakpoint makes, is left alone), so their pages always equal the file's:
// dropping them loses nothing. The pages stay in the page cache, unmapped, where the kernel
// reclaims them first under memory pressure.

#include <cstddef>

namespace runplane::agent {

struct ReleasedPages {
    std::size_t bytes = 0;     // virtual bytes advised
    std::size_t segments = 0;  // read-only segments of the executable released
};

/// Releases this executable's read-only, never-written mapped pages (see the file comment).
ReleasedPages releaseStartupPages();

}  // namespace runplane::agent
