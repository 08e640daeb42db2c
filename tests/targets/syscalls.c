// A program that spends most of its time in the kernel: write_loop writes 1 byte to /dev/null and
// getppid_loop calls getppid(), alternating for SECONDS. Its kernel stacks (the write and getppid system
// calls) are known by construction. Usage: syscalls [SECONDS]
#include "target_common.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

TARGET_FN uint64_t write_loop(int fd, int n)
{
    uint64_t written = 0;
    const char byte = 'x';
    for (int i = 0; i < n; ++i)
        written += (uint64_t)write(fd, &byte, 1);
    KEEP();
    return written;
}

TARGET_FN uint64_t getppid_loop(int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; ++i)
        sum += (uint64_t)syscall(SYS_getppid); // the libc wrapper would not be cached, but be explicit
    KEEP();
    return sum;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 2.0);
    const int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        perror("/dev/null");
        return 1;
    }
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds) {
        sink += write_loop(fd, 20000);
        sink += getppid_loop(20000);
    }
    close(fd);
    return sink == 42 ? 3 : 0;
}
