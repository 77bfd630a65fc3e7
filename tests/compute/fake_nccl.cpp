// A stand-in libnccl.so.2 for resolution tests: real shared libraries the helper process loads.
// FAKE_NCCL_MODE: 0 = ncclGetVersion returns FAKE_NCCL_VERSION; 1 = no ncclGetVersion symbol;
// 2 = aborts while loading; 3 = ncclGetVersion returns an error; 4 = hangs while loading.
#include <cstdlib>

#include <unistd.h>

#ifndef FAKE_NCCL_MODE
#define FAKE_NCCL_MODE 0
#endif

#if FAKE_NCCL_MODE == 2
__attribute__((constructor)) static void crashOnLoad() {
    std::abort();
}
#endif
#if FAKE_NCCL_MODE == 4
__attribute__((constructor)) static void hangOnLoad() {
    ::sleep(60);
}
#endif

extern "C" {
#if FAKE_NCCL_MODE == 1
int fakeNcclSomethingElse() {
    return 0;
}
#else
int ncclGetVersion(int* version) {
#if FAKE_NCCL_MODE == 3
    *version = 0;
    return 1;  // ncclUnhandledCudaError
#else
    *version = FAKE_NCCL_VERSION;
    return 0;
#endif
}
#endif
}
