// Forks once: the parent spins in parent_work and the child in child_work, each for SECONDS.
#include "target_common.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

TARGET_FN uint64_t parent_work(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

TARGET_FN uint64_t child_work(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 2.0);
    const pid_t pid = fork();
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += pid == 0 ? child_work() : parent_work();
    if (pid == 0)
        _exit((int)(sink & 1) * 0);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
}
