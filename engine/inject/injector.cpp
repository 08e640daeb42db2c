#include "engine/inject/injector.h"

#include "engine/common/clock.h"
#include "engine/common/fd_closer.h"
#include "engine/inject/inject_checks.h"
#include "engine/inject/library_path.h"
#include "engine/inject/remote_call.h"
#include "engine/inject/remote_memory.h"
#include "engine/inject/safe_point.h"
#include "engine/inject/target_modules.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

namespace emberline::engine {
namespace {

constexpr int kMaxTries = 200;
constexpr int64_t kSafePointBudgetNs = 1'000'000'000;
constexpr int64_t kCallBudgetNs = 5'000'000'000;
constexpr size_t kMaxErrorText = 4096;

// The first of `names` that a module exports, libc's first: where dlopen lives.
std::optional<uint64_t> findInTarget(int pid, const std::vector<TargetModule> &modules,
                                     std::initializer_list<const char *> names)
{
    const TargetModule *libc = findModuleByName(modules, "libc");
    for (const char *name : names) {
        if (libc)
            if (auto address = targetSymbolAddress(pid, *libc, name))
                return address;
        for (const TargetModule &m : modules)
            if (&m != libc)
                if (auto address = targetSymbolAddress(pid, m, name))
                    return address;
    }
    return std::nullopt;
}

// What the injection needs to know before it stops anything.
struct Plan {
    int tid = 0;
    LibraryInTarget library;
    struct stat file {};
    uint64_t functionOffset = 0; // F's st_value in the library
    std::optional<uint64_t> dlopen, dlerror;
    const TargetModule *loaded = nullptr;
    std::vector<TargetMapping> maps;
    std::vector<TargetModule> modules;
    bool besideOlder = false; // a copy, loaded beside an older build the target holds by the library's own path
};

// Whether a module of the target was mapped from `path` but from a file no longer there (replaced or deleted since):
// its map names it "PATH (deleted)".
bool holdsOlderFile(const std::vector<TargetModule> &modules, const std::string &path)
{
    const std::string deleted = path + " (deleted)";
    return std::any_of(modules.begin(), modules.end(), [&](const TargetModule &m) { return m.path == deleted; });
}

Status plan(const InjectRequest &request, Plan &p)
{
    const int pid = request.pid;
    if (pid <= 0)
        return makeError(Error::Code::Invalid, "no process id given");
    if (pid == ::getpid())
        return makeError(Error::Code::Invalid, "a process cannot trace itself: load the library with dlopen instead");
    auto facts = readProcessFacts(pid);
    if (!facts)
        return facts.error();
    if (auto st = checkProcess(pid, facts.value()); !st)
        return st;
    auto maps = readTargetMaps(pid);
    if (!maps && maps.error().code == Error::Code::Permission)
        return makeError(Error::Code::Permission, explainPtraceRefusal(pid, facts.value(), EPERM));
    if (!maps)
        return maps.error();
    p.maps = std::move(maps).value();
    p.modules = targetModules(p.maps);
    if (auto st = checkDynamicallyLinked(pid, p.modules); !st)
        return st;
    auto tid = chooseThread(pid, request.tid);
    if (!tid)
        return tid.error();
    p.tid = tid.value();

    auto library = libraryPathInTarget(pid, request.library, request.loadIfMissing);
    if (!library)
        return library.error();
    p.library = std::move(library).value();
    if (!p.library.copied && holdsOlderFile(p.modules, p.library.path)) {
        // The target loaded this path earlier from a file since replaced (Emberline upgraded between two attaches):
        // dlopen of the path would hand back that older build, so a copy named by its contents is loaded beside it
        // (and found there by a call into the library loaded already).
        auto copy = libraryPathInTarget(pid, request.library, request.loadIfMissing, true);
        if (!copy)
            return copy.error();
        p.library = std::move(copy).value();
        p.besideOlder = true;
    }
    FdCloser fd(::open(p.library.ourPath.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0 || ::fstat(fd.fd, &p.file) != 0)
        return makeError(Error::Code::Io, "cannot open " + p.library.ourPath + ": " + std::strerror(errno));
    const auto symbol = findDynamicSymbol(fd.fd, request.function);
    if (!symbol)
        return makeError(Error::Code::Invalid, request.library + " exports no function " + request.function);
    p.functionOffset = symbol->value;
    p.loaded = findModuleByFile(p.modules, p.file.st_dev, p.file.st_ino, p.library.path);
    if (!request.loadIfMissing) {
        if (!p.loaded)
            return makeError(Error::Code::Invalid,
                             request.library + " is not loaded in process " + std::to_string(pid) + ": not loaded");
        return Ok{};
    }
    p.dlopen = findInTarget(pid, p.modules, {"dlopen", "__libc_dlopen_mode"});
    if (!p.dlopen)
        return makeError(Error::Code::Unsupported,
                         "process " + std::to_string(pid) +
                             " has no dlopen: none of its libraries exports dlopen or __libc_dlopen_mode");
    p.dlerror = findInTarget(pid, p.modules, {"dlerror"});
    return Ok{};
}

// Stops the thread until it stands at a safe point (resumed between tries, 1 ms apart).
Status stopAtSafePoint(RemoteThread &thread, SafePoint &safePoint, int &tries)
{
    const int64_t deadline = clockNs(CLOCK_MONOTONIC) + kSafePointBudgetNs;
    std::map<std::string, int> where;
    for (tries = 1; tries <= kMaxTries; ++tries) {
        if (auto st = thread.stop(std::max(deadline, clockNs(CLOCK_MONOTONIC) + 100'000'000)); !st)
            return st;
        const SafePoint::Verdict verdict = safePoint.check(thread.tid(), thread.registers());
        if (verdict.safe)
            return Ok{};
        ++where[verdict.where];
        if (auto st = thread.resume(); !st)
            return st;
        if (clockNs(CLOCK_MONOTONIC) >= deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    tries = std::min(tries, kMaxTries);
    auto most = where.begin();
    for (auto it = where.begin(); it != where.end(); ++it)
        if (it->second > most->second)
            most = it;
    return makeError(Error::Code::Cancelled, "thread " + std::to_string(thread.tid()) +
                                                 " was never at a safe point to call dlopen in " +
                                                 std::to_string(tries) + " stops over up to 1 s: it kept stopping in " +
                                                 (most == where.end() ? std::string("?") : most->first) + " (" +
                                                 std::to_string(most == where.end() ? 0 : most->second) + " times)");
}

Result<uint64_t> callDlopen(RemoteThread &thread, const Plan &p, int64_t deadline)
{
    auto handle = thread.call(*p.dlopen, {std::string_view(p.library.path), uint64_t(RTLD_NOW)}, deadline);
    if (!handle || handle.value() != 0)
        return handle;
    std::string reason = "no reason given";
    if (p.dlerror) {
        auto text = thread.call(*p.dlerror, {}, deadline);
        if (text && text.value() != 0)
            if (auto read = readRemoteString(thread.pid(), thread.tid(), text.value(), kMaxErrorText))
                reason = read.value();
    }
    // A library loaded into a running program takes its thread-local storage from the small reserve the C library
    // set aside at the start; a program that holds earlier builds of the agent (attached before Emberline was
    // upgraded) may have none left.
    if (p.besideOlder && reason.find("static TLS") != std::string::npos)
        reason += " (the program holds an earlier build of Emberline's agent, loaded by an attach before Emberline "
                  "was upgraded, and has no room for another: restart the program to attach with this build)";
    return makeError(Error::Code::Io, "dlopen of " + p.library.path + " failed in process " +
                                          std::to_string(thread.pid()) + ": " + reason);
}

} // namespace

Result<InjectReport> injectAndCall(const InjectRequest &request)
{
    const int64_t startedAt = clockNs(CLOCK_MONOTONIC);
    Plan p;
    if (auto st = plan(request, p); !st)
        return st.error();
    const int64_t plannedAt = clockNs(CLOCK_MONOTONIC);
    const int pid = request.pid;
    InjectReport report;
    report.loadedBefore = p.loaded != nullptr;
    report.pathInTarget = p.library.path;
    SafePoint safePoint(pid, p.maps, p.modules);

    auto seized = RemoteThread::seize(pid, p.tid);
    if (!seized) {
        if (seized.error().code != Error::Code::Permission)
            return seized.error();
        auto facts = readProcessFacts(pid);
        return makeError(Error::Code::Permission,
                         explainPtraceRefusal(pid, facts ? facts.value() : ProcessFacts{}, EPERM));
    }
    RemoteThread &thread = *seized.value();
    if (auto st = stopAtSafePoint(thread, safePoint, report.tries); !st)
        return st.error();
    if (auto st = thread.save(); !st)
        return st.error();
    const int64_t stoppedAt = thread.stoppedAtNs();
    report.planNs = uint64_t(plannedAt - startedAt);
    report.safePointNs = uint64_t(stoppedAt - plannedAt);
    auto pause = [&](InjectStep step) {
        if (request.pauseAt)
            request.pauseAt(step);
    };
    pause(InjectStep::Before);
    const int64_t deadline = clockNs(CLOCK_MONOTONIC) + kCallBudgetNs;
    if (request.loadIfMissing)
        if (auto handle = callDlopen(thread, p, deadline); !handle)
            return handle.error();
    const int64_t loadedAt = clockNs(CLOCK_MONOTONIC);
    report.dlopenNs = uint64_t(loadedAt - stoppedAt);

    // Where the library lies now that it is loaded.
    auto maps = readTargetMaps(pid);
    if (!maps)
        return maps.error();
    const std::vector<TargetModule> modules = targetModules(maps.value());
    const TargetModule *module = findModuleByFile(modules, p.file.st_dev, p.file.st_ino, p.library.path);
    FdCloser fd(::open(p.library.ourPath.c_str(), O_RDONLY | O_CLOEXEC));
    const std::optional<int64_t> bias = module && fd.fd >= 0 ? loadBias(fd.fd, *module) : std::nullopt;
    if (!bias)
        return makeError(Error::Code::Internal, p.library.path + " is not in the map of process " +
                                                    std::to_string(pid) + " after dlopen returned");
    report.libraryBase = module->start;
    auto result = thread.call(p.functionOffset + static_cast<uint64_t>(*bias), {std::string_view(request.argument)},
                              deadline, [&] { pause(InjectStep::During); });
    if (!result)
        return result.error();
    report.result = static_cast<int32_t>(result.value()); // an int: the low half of rax
    report.callNs = uint64_t(clockNs(CLOCK_MONOTONIC) - loadedAt);
    pause(InjectStep::After);
    if (auto st = thread.detach(); !st)
        return st.error();
    report.stoppedNs = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC) - stoppedAt);
    return report;
}

} // namespace emberline::engine
