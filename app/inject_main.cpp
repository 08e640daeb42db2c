// emberline-inject: loads a library into a running process and calls one of its functions (engine/inject), on
// behalf of the profiler, which starts it (engine/inject/inject_client.h). It runs apart from the profiler so that
// the profiler being killed at any step cannot leave the target stopped or in the middle of a call: it leaves the
// profiler's session and process group and ignores the signals that end a process politely or hang it up, then
// finishes (or undoes) the injection whatever happens to the profiler, prints one line and exits.
//
//   emberline-inject --pid PID [--tid TID] --library PATH --function NAME [--argument TEXT] [--no-load]
//
// For tests only: EMBERLINE_INJECT_PAUSE_AT=before|during|after makes it wait kPauseMs at that step, so that a
// test can kill the profiler there.
#include "engine/inject/inject_client.h"
#include "engine/inject/injector.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace emberline::engine;

constexpr int kPauseMs = 500;

void pauseAt(InjectStep step)
{
    static const char *const chosen = std::getenv("EMBERLINE_INJECT_PAUSE_AT");
    if (!chosen)
        return;
    const char *name = step == InjectStep::Before ? "before" : step == InjectStep::During ? "during" : "after";
    if (std::strcmp(chosen, name) == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(kPauseMs));
}

// The whole line in one write: a reader sees all of it or nothing. A reader that went away (EPIPE) is no matter.
void answer(const std::string &line)
{
    const std::string text = line + "\n";
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(STDOUT_FILENO, text.data() + written, text.size() - written);
        if (n <= 0)
            return;
        written += static_cast<size_t>(n);
    }
}

} // namespace

int main(int argc, char **argv)
{
    ::setsid(); // fails only for a process group leader, which a spawned child is not
    for (const int sig : {SIGHUP, SIGPIPE, SIGINT, SIGTERM, SIGQUIT})
        ::signal(sig, SIG_IGN);
    auto request = parseInjectHelperArguments(std::vector<std::string>(argv + 1, argv + argc));
    if (!request) {
        answer(formatInjectAnswer(request.error()));
        return 2;
    }
    request.value().pauseAt = pauseAt;
    const Result<InjectReport> result = injectAndCall(request.value());
    answer(formatInjectAnswer(result));
    return result ? 0 : 1;
}
