#include "engine/inject/inject_client.h"

#include "engine/common/install_paths.h"

#include "engine/common/clock.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <sstream>

extern char **environ; // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace emberline::engine {
namespace {

constexpr std::array<std::pair<Error::Code, const char *>, 8> kCodeNames = {{
    {Error::Code::Io, "io"},
    {Error::Code::Format, "format"},
    {Error::Code::Limit, "limit"},
    {Error::Code::Cancelled, "cancelled"},
    {Error::Code::Invalid, "invalid"},
    {Error::Code::Unsupported, "unsupported"},
    {Error::Code::Permission, "permission"},
    {Error::Code::Internal, "internal"},
}};

const char *codeName(Error::Code code)
{
    for (const auto &[c, name] : kCodeNames)
        if (c == code)
            return name;
    return "internal";
}

Error::Code codeOf(const std::string &name)
{
    for (const auto &[c, codeName] : kCodeNames)
        if (name == codeName)
            return c;
    return Error::Code::Internal;
}

bool parseNumber(const std::string &text, int &out)
{
    char *end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || value < INT_MIN || value > INT_MAX)
        return false;
    out = static_cast<int>(value);
    return true;
}

// The value of "key=value" among the answer's words; false when missing.
bool field(const std::string &line, const std::string &key, std::string &value)
{
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
        if (word.starts_with(key + "=")) {
            value = word.substr(key.size() + 1);
            return true;
        }
    }
    return false;
}

// Reads the helper's standard output until it closes it or `deadlineNs`.
bool readAnswer(int fd, int64_t deadlineNs, std::string &out)
{
    for (;;) {
        const int64_t left = deadlineNs - clockNs(CLOCK_MONOTONIC);
        if (left <= 0)
            return false;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left / 1'000'000 + 1, INT_MAX)));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0)
            return false;
        if (ready < 0)
            return true;
        char buffer[4096];
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return true;
        out.append(buffer, static_cast<size_t>(n));
    }
}

} // namespace

std::string defaultInjectHelperPath()
{
    return installedLibraryFile(kInjectHelperName);
}

std::vector<std::string> injectHelperArguments(const InjectRequest &request)
{
    std::vector<std::string> args = {"--pid",      std::to_string(request.pid),
                                     "--library",  request.library,
                                     "--function", request.function,
                                     "--argument", request.argument};
    if (request.tid > 0) {
        args.emplace_back("--tid");
        args.push_back(std::to_string(request.tid));
    }
    if (!request.loadIfMissing)
        args.emplace_back("--no-load");
    return args;
}

Result<InjectRequest> parseInjectHelperArguments(const std::vector<std::string> &arguments)
{
    InjectRequest r;
    for (size_t i = 0; i < arguments.size(); ++i) {
        const std::string &option = arguments[i];
        if (option == "--no-load") {
            r.loadIfMissing = false;
            continue;
        }
        if (i + 1 >= arguments.size())
            return makeError(Error::Code::Invalid, option + " needs a value");
        const std::string &value = arguments[++i];
        if ((option == "--pid" && !parseNumber(value, r.pid)) || (option == "--tid" && !parseNumber(value, r.tid)))
            return makeError(Error::Code::Invalid, option + " takes a number, not " += value);
        if (option == "--library")
            r.library = value;
        else if (option == "--function")
            r.function = value;
        else if (option == "--argument")
            r.argument = value;
        else if (option != "--pid" && option != "--tid")
            return makeError(Error::Code::Invalid, "unknown option " + option);
    }
    if (r.pid <= 0 || r.library.empty() || r.function.empty())
        return makeError(Error::Code::Invalid, "usage: " + std::string(kInjectHelperName) +
                                                   " --pid PID [--tid TID] --library PATH --function NAME "
                                                   "[--argument TEXT] [--no-load]");
    return r;
}

std::string formatInjectAnswer(const Result<InjectReport> &result)
{
    if (!result) {
        std::string message = result.error().message;
        for (char &c : message)
            if (c == '\n' || c == '\r')
                c = ' ';
        return std::string("error ") + codeName(result.error().code) + " " + message;
    }
    const InjectReport &r = result.value();
    char text[320];
    using ull = unsigned long long;
    std::snprintf(
        text, sizeof text,
        "ok result=%lld base=0x%llx stopped_ns=%llu tries=%d loaded_before=%d plan_ns=%llu safe_point_ns=%llu "
        "dlopen_ns=%llu call_ns=%llu path=",
        static_cast<long long>(r.result), ull(r.libraryBase), ull(r.stoppedNs), r.tries, r.loadedBefore ? 1 : 0,
        ull(r.planNs), ull(r.safePointNs), ull(r.dlopenNs), ull(r.callNs));
    return text + r.pathInTarget;
}

Result<InjectReport> parseInjectAnswer(const std::string &line)
{
    if (line.starts_with("error ")) {
        const size_t space = line.find(' ', 6);
        return makeError(codeOf(line.substr(6, space == std::string::npos ? std::string::npos : space - 6)),
                         space == std::string::npos ? std::string() : line.substr(space + 1));
    }
    const size_t path = line.find(" path=");
    std::string result, base, stopped, tries, loaded;
    if (!line.starts_with("ok ") || path == std::string::npos || !field(line, "result", result) ||
        !field(line, "base", base) || !field(line, "stopped_ns", stopped) || !field(line, "tries", tries) ||
        !field(line, "loaded_before", loaded))
        return makeError(Error::Code::Format, "the injector's answer is not understood: " + line);
    InjectReport r;
    r.result = std::strtoll(result.c_str(), nullptr, 10);
    r.libraryBase = std::strtoull(base.c_str(), nullptr, 16);
    r.stoppedNs = std::strtoull(stopped.c_str(), nullptr, 10);
    r.tries = std::atoi(tries.c_str());
    r.loadedBefore = loaded == "1";
    // The phases' times, where the helper tells them.
    for (auto [name, value] : {std::pair{"plan_ns", &r.planNs}, std::pair{"safe_point_ns", &r.safePointNs},
                               std::pair{"dlopen_ns", &r.dlopenNs}, std::pair{"call_ns", &r.callNs}})
        if (std::string text; field(line, name, text))
            *value = std::strtoull(text.c_str(), nullptr, 10);
    r.pathInTarget = line.substr(path + 6);
    return r;
}

Result<InjectReport> injectWithHelper(const InjectRequest &request, const std::string &helperPath)
{
    const std::string helper = helperPath.empty() ? defaultInjectHelperPath() : helperPath;
    if (helper.empty() || ::access(helper.c_str(), X_OK) != 0)
        return makeError(Error::Code::Unsupported, "the injector " + std::string(kInjectHelperName) +
                                                       " was not found at " + helper +
                                                       " (is Emberline installed whole?)");
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        return makeError(Error::Code::Io, std::string("pipe: ") + std::strerror(errno));
    std::vector<std::string> args = injectHelperArguments(request);
    args.insert(args.begin(), helper);
    std::vector<char *> argv;
    argv.reserve(args.size() + 1);
    for (std::string &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    pid_t child = -1;
    const int spawned = ::posix_spawn(&child, helper.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        return makeError(Error::Code::Io, "cannot start " + helper + ": " + std::strerror(spawned));
    }
    // The helper ahead of the program's threads where this user may put it there (root): on a machine whose cores
    // are all busy, a process of ordinary priority gets its fair share of them from its start; with 500 busy threads
    // on 2 cores the helper's run took 6 s, 5 of them to load its libraries, and while it holds a thread of the
    // program stopped, each wait for a core lengthens the pause. It runs for well under a second, mostly waiting.
    // Refused (EACCES) without the right: it runs as it is.
    ::setpriority(PRIO_PROCESS, id_t(child), kHelperNice);
    std::string answer;
    const bool finished = readAnswer(out[0], clockNs(CLOCK_MONOTONIC) + int64_t(kHelperTimeoutMs) * 1'000'000, answer);
    ::close(out[0]);
    if (!finished)
        ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (!finished)
        return makeError(Error::Code::Cancelled, "the injector did not finish within " +
                                                     std::to_string(kHelperTimeoutMs / 1000) + " s and was killed");
    if (WIFSIGNALED(status)) {
        if (WTERMSIG(status) == SIGSYS)
            return makeError(Error::Code::Permission,
                             "the injector was killed by SIGSYS: a seccomp filter forbids ptrace");
        return makeError(Error::Code::Internal,
                         std::string("the injector was killed by ") + strsignal(WTERMSIG(status)));
    }
    const std::string line = answer.substr(0, answer.find('\n'));
    if (line.empty())
        return makeError(Error::Code::Internal, "the injector exited with status " +
                                                    std::to_string(WEXITSTATUS(status)) + " without an answer");
    return parseInjectAnswer(line);
}

} // namespace emberline::engine
