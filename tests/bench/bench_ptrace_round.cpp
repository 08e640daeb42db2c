// What the bare ptrace mechanism costs on this machine: the floor under the ptrace sampler's round. A busy child
// is stopped ROUNDS times, paced INTERVAL_US apart, with nothing but the system calls a round of one running
// thread needs (PTRACE_INTERRUPT, its schedstat read while it gets to its stop, waitpid, PTRACE_GETREGS,
// process_vm_readv of BYTES from its stack pointer, PTRACE_CONT) and no unwinding, recording or bookkeeping.
//
//   bench_ptrace_round [ROUNDS] [BYTES] [INTERVAL_US] [wait|poll]
//
// `poll` waits for the stop with waitpid(WNOHANG) in a loop instead of sleeping in waitpid: the tracer spends
// the time the interrupt takes to land on a CPU instead of being woken once the child has stopped.
// Prints the tracer's CPU per round (the sleep and its wake-up included), how long the child was held per
// round, and the cost per round as the ptrace sampler's budget counts it (its own CPU, plus the target's
// kernel time per stop, PtraceSamplerOptions::stopCostNs, plus the held time of a thread that wanted to run),
// with the rate a 2% budget buys at that cost. Compare it with bench_ptrace_split.sh's "us a round".
#include "engine/common/clock.h"
#include "engine/process/proc_files.h"
#include "engine/sampler/ptrace_sampler.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace emberline::engine;

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
    const size_t bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8192;
    const int intervalUs = argc > 3 ? std::atoi(argv[3]) : 5000;
    const std::string mode = argc > 4 ? argv[4] : "wait";
    if (rounds <= 0 || bytes == 0 || intervalUs < 0 || (mode != "wait" && mode != "poll")) {
        std::fprintf(stderr, "usage: bench_ptrace_round [ROUNDS] [BYTES] [INTERVAL_US] [wait|poll]\n");
        return 2;
    }
    const pid_t child = ::fork();
    if (child == 0) {
        volatile unsigned long spin = 0;
        for (;;)
            spin = spin + 1;
    }
    if (child < 0 || ::ptrace(PTRACE_SEIZE, child, nullptr, nullptr) != 0) {
        std::perror("bench_ptrace_round: fork or PTRACE_SEIZE");
        if (child > 0)
            ::kill(child, SIGKILL);
        return 1;
    }
    const std::string schedstat = "/proc/" + std::to_string(child) + "/schedstat";
    const int fd = ::open(schedstat.c_str(), O_RDONLY | O_CLOEXEC);
    std::vector<uint8_t> stack(bytes);
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // let the child get going

    int64_t heldNs = 0;
    int64_t polls = 0;
    int failures = 0;
    const int64_t cpuStart = clockNs(CLOCK_THREAD_CPUTIME_ID);
    const int64_t wallStart = clockNs(CLOCK_MONOTONIC);
    for (int r = 0; r < rounds; ++r) {
        std::this_thread::sleep_for(std::chrono::microseconds(intervalUs));
        const int64_t from = clockNs(CLOCK_MONOTONIC);
        ::ptrace(PTRACE_INTERRUPT, child, nullptr, nullptr);
        uint64_t cpu = 0, delay = 0, runs = 0;
        readSchedstat(fd, cpu, delay, runs);
        int status = 0;
        pid_t waited = 0;
        if (mode == "poll") {
            while ((waited = ::waitpid(child, &status, __WALL | WNOHANG)) == 0)
                ++polls;
        } else {
            waited = ::waitpid(child, &status, __WALL);
        }
        if (waited != child || !WIFSTOPPED(status)) {
            ++failures;
            break;
        }
        user_regs_struct regs{};
        ::ptrace(PTRACE_GETREGS, child, nullptr, &regs);
        iovec local{stack.data(), stack.size()};
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the remote stack is an address in the child
        iovec remote{reinterpret_cast<void *>(regs.rsp), stack.size()};
        if (::process_vm_readv(child, &local, 1, &remote, 1, 0) < 0)
            ++failures;
        heldNs += clockNs(CLOCK_MONOTONIC) - from;
        ::ptrace(PTRACE_CONT, child, nullptr, nullptr);
    }
    const int64_t cpuNs = clockNs(CLOCK_THREAD_CPUTIME_ID) - cpuStart;
    const int64_t wallNs = clockNs(CLOCK_MONOTONIC) - wallStart;
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, __WALL);

    const double own = static_cast<double>(cpuNs) / 1e3 / rounds;
    const double held = static_cast<double>(heldNs) / 1e3 / rounds;
    const double stop = static_cast<double>(PtraceSamplerOptions{}.stopCostNs) / 1e3;
    const double cost = own + stop + held;
    std::printf("rounds %d (%.0f a second), %zu bytes copied a round, %s for the stop (%.1f empty polls a round)%s\n",
                rounds, rounds * 1e9 / wallNs, bytes, mode == "poll" ? "polling" : "waiting",
                static_cast<double>(polls) / rounds, failures ? " (some copies failed)" : "");
    std::printf("tracer CPU %.1f us a round; child held %.1f us a round\n", own, held);
    std::printf("cost a round as the budget counts it: %.1f us (%.1f + %.1f stop + %.1f held); a 2%% budget buys "
                "%.0f rounds a second\n",
                cost, own, stop, held, 0.02 * 1e6 / cost);
    return 0;
}
