#pragma once

// Hand-made flushes for uploader tests: a small profile with hot_sixty in a main executable, and the C runtime,
// the C++ runtime, Qt and a third-party library mapped, serialized the way the exporter does (gzip pprof).

#include "engine/flush/flush.h"
#include "engine/pprof/pprof_writer.h"
#include "engine/upload/uploader.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace emberline::test {

inline std::shared_ptr<const engine::Flush> makeFlush(uint32_t sequence, const std::string &path = {})
{
    using namespace engine;
    auto p = std::make_shared<Profile>();
    p->sampleTypes().push_back({p->intern("cpu-samples"), p->intern("count")});
    p->sampleTypes().push_back({p->intern("cpu-time"), p->intern("nanoseconds")});
    const char *files[] = {"/opt/shop/bin/checkout",
                           "/usr/lib/x86_64-linux-gnu/libc.so.6",
                           "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                           "/usr/lib/x86_64-linux-gnu/libQt6Core.so.6",
                           "/usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0",
                           "[vdso]"};
    uint64_t base = 0x400000;
    for (const char *f : files) {
        Mapping m;
        m.id = p->mappings().size() + 1;
        m.start = base;
        m.limit = base + 0x10000;
        m.filename = p->intern(f);
        m.buildId = p->intern("0123456789abcdef");
        p->mappings().push_back(m);
        base += 0x100000;
    }
    Function fn;
    fn.id = 1;
    fn.name = fn.systemName = p->intern("hot_sixty");
    fn.filename = p->intern("checkout.c");
    p->functions().push_back(fn);
    Location loc;
    loc.id = 1;
    loc.mappingIndex = 0;
    loc.address = 0x401000;
    loc.lines.push_back(Line{0, 42, 0});
    p->locations().push_back(loc);
    const uint32_t stack[] = {0};
    const int64_t values[] = {3, 30'000'000};
    p->addSample(stack, values);
    p->durationNanos = 1'000'000'000;
    p->timeNanos = 1'700'000'000'000'000'000 + int64_t(sequence) * 1'000'000'000;
    p->period = 10'000'000;
    p->periodType = {p->intern("cpu-time"), p->intern("nanoseconds")};

    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    flush->startNs = p->timeNanos;
    flush->endNs = p->timeNanos + p->durationNanos;
    flush->pprofBytes = writePprof(*p, true);
    flush->profile = p;
    flush->path = path;
    flush->samples = 3;
    return flush;
}

// Collects the uploader's records from its thread.
struct RecordSink {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::shared_ptr<const engine::UploadRecord>> records;

    engine::Uploader::RecordCallback callback()
    {
        return [this](std::shared_ptr<const engine::UploadRecord> r) {
            std::lock_guard lock(mutex);
            records.push_back(std::move(r));
            changed.notify_all();
        };
    }
    bool waitFor(size_t n, int timeoutMs)
    {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return records.size() >= n; });
    }
    std::vector<std::shared_ptr<const engine::UploadRecord>> snapshot()
    {
        std::lock_guard lock(mutex);
        return records;
    }
};

// Settings for a loopback agent that fail fast.
inline engine::UploadSettings loopbackSettings(const std::string &agentUrl)
{
    engine::UploadSettings s;
    s.agentUrl = agentUrl;
    s.service = "checkout";
    s.env = "test";
    s.version = "1.2.3";
    s.tags = {{"team", "payments"}, {"region", "eu:west"}};
    s.timeoutMs = 2000;
    s.connectTimeoutMs = 1000;
    s.backoffMs = 50;
    return s;
}

// A TCP port on 127.0.0.1 with nothing listening (bound, then released).
inline int closedPort()
{
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

} // namespace emberline::test
