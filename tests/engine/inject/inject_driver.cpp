// The profiler's side of an injection, as a program of its own, for the tests that kill the profiler while its
// injector works: runs injectWithHelper and prints the helper's answer.
// Usage: inject_driver HELPER --pid PID --library PATH --function NAME [--argument TEXT] [--tid TID] [--no-load]
#include "engine/inject/inject_client.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace emberline::engine;

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: inject_driver HELPER ARGUMENTS...\n");
        return 2;
    }
    auto request = parseInjectHelperArguments(std::vector<std::string>(argv + 2, argv + argc));
    if (!request) {
        std::fprintf(stderr, "inject_driver: %s\n", request.error().message.c_str());
        return 2;
    }
    const Result<InjectReport> result = injectWithHelper(request.value(), argv[1]);
    std::printf("%s\n", formatInjectAnswer(result).c_str());
    return result ? 0 : 1;
}
