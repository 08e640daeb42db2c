#pragma once

#include <unistd.h>

namespace emberline::engine {

// Closes a file descriptor when it goes out of scope; neither copied nor moved.
//
// Thread: any; the descriptor belongs to the scope that holds it.
struct FdCloser {
    explicit FdCloser(int descriptor) : fd(descriptor) {}
    FdCloser(const FdCloser &) = delete;
    FdCloser &operator=(const FdCloser &) = delete;
    ~FdCloser() { ::close(fd); }
    int fd;
};

} // namespace emberline::engine
