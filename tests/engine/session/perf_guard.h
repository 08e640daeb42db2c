#pragma once

// Tests that sample real processes need perf_event_open. Unprivileged local runs may skip them, but where
// CI=true (CI runs as root) a skip would hide a broken sampler, so it fails instead.

#include <QTest>

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace emberline::test {

inline bool perfEventsAllowed()
{
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 1000000;
    attr.exclude_kernel = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return false;
    close(static_cast<int>(fd));
    return true;
}

inline bool inCi()
{
    return qEnvironmentVariable("CI") == QLatin1String("true");
}

} // namespace emberline::test

#define REQUIRE_PERF_EVENTS()                                                                                          \
    do {                                                                                                               \
        if (!emberline::test::perfEventsAllowed()) {                                                                   \
            if (emberline::test::inCi())                                                                               \
                QFAIL("perf_event_open is not permitted, but CI=true: the sampler cannot be tested");                  \
            QSKIP("perf_event_open is not permitted for this user (perf_event_paranoid); run as root");                \
        }                                                                                                              \
    } while (0)
