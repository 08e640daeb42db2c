#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <functional>
#include <string>

namespace emberline::engine {

// The steps at which InjectRequest::pauseAt is called, with the target's thread stopped: its state saved and
// nothing called yet (Before), while it runs the function (During), after the function returned, before the
// thread is restored (After).
enum class InjectStep { Before, During, After };

// "Load library L into process P, then call `int F(const char *argument)` exported by L."
struct InjectRequest {
    int pid = 0;
    std::string library;  // a path of ours; copied into the target's root when the target does not see it
    std::string function; // exported by the library (.dynsym)
    std::string argument;
    int tid = 0;               // the thread to call on; 0: the thread-group leader (another thread if it ended)
    bool loadIfMissing = true; // false: only call F if L is loaded already, else fail ("not loaded")
    std::function<void(InjectStep)> pauseAt; // tests: called at each step
};

struct InjectReport {
    int64_t result = 0;       // F's int
    uint64_t libraryBase = 0; // the library's lowest mapping in the target
    std::string pathInTarget; // the path the target loaded the library from
    uint64_t stoppedNs = 0;   // how long the thread was held stopped (from its stop at a safe point to the detach)
    int tries = 0;            // stops it took to find the thread at a safe point
    bool loadedBefore = false;
    // Where the injection's time went: the checks and lookups before any stop, the stops until the thread stood at
    // a safe point, dlopen's call and F's.
    uint64_t planNs = 0;
    uint64_t safePointNs = 0;
    uint64_t dlopenNs = 0;
    uint64_t callNs = 0;
};

// Does the whole injection in this process. The sequence: the checks (inject_checks.h); the library's path in the
// target (library_path.h); dlopen's address in the target (libc's .dynsym: dlopen, glibc 2.34 on, else
// __libc_dlopen_mode); the thread seized alone and stopped until it stands at a safe point (safe_point.h; at most
// 200 stops in one second); its state saved; dlopen(path, RTLD_NOW) called on it (dlerror() read when that fails);
// F's address from the library's mapping and .dynsym; F(argument) called; the state restored; the thread detached.
// Everything happens in one stop of the thread, and every error path leaves it running, untraced and as it was.
//
// A second injection of the same library finds it loaded (loadedBefore): dlopen returns the same handle without
// running its constructors again.
//
// Thread: any; blocks (at most about 7 s: 1 s for a safe point, 5 s for the calls).
Result<InjectReport> injectAndCall(const InjectRequest &request);

} // namespace emberline::engine
