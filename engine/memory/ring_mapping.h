#pragma once

// One ring as the ring reader holds it (ring_reader.cpp reads its records, ring_reader_controls.cpp its header's
// settings and counts): its mapping into the session, and what the session keeps beside it.
//
// Thread: the thread that polls the rings.

#include "engine/agent/agent_protocol.h"
#include "engine/memory/ring_reader.h"
#include "engine/memory/walked_stacks.h"

#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

namespace emberline::engine {

struct RingReader::Ring {
    agent::RingHeader *header = nullptr;
    uint8_t *data = nullptr;
    uint64_t mapped = 0;
    uint32_t pid = 0;
    uint64_t image = 0;
    bool started = false;
    bool heldByTime = false; // its last drain stopped at a record stamped after the poll's time
    int fd = -1;             // kept until the ring is reserved whole (reserveMore)
    bool reserveFailed = false;
    bool indexed = false;        // its module index's pages are had, and the unwind tables serve it: it may walk
    WalkedStacks stacks;         // the walked stacks written out
    uint64_t reserveAgainNs = 0; // after a failure, the next try (a failing fallocate still makes and frees pages)

    ~Ring()
    {
        if (header)
            munmap(header, mapped);
        if (fd >= 0)
            close(fd);
    }
};

} // namespace emberline::engine
