#pragma once

#include "engine/common/result.h"
#include "engine/inject/injector.h"

#include <string>
#include <vector>

namespace emberline::engine {

// Injection through the helper executable `emberline-inject` (app/inject_main.cpp), so that the profiler being
// killed at any step cannot leave the target in the middle of a call: the helper runs in a session of its own,
// ignores the signals that end a process politely and hang-ups, finishes (or undoes) the injection whatever happens
// to us, and exits. It prints one line:
//   ok result=<int> base=0x<hex> stopped_ns=<n> tries=<n> loaded_before=<0|1> path=<path in target, to the end>
//   error <code> <message>
// where <code> is one of Error::Code's names in lower case (io, invalid, permission, ...).
//
// The helper is found beside the running executable as the agent is (<prefix>/bin/emberline ->
// <prefix>/lib/emberline/emberline-inject), unless `helperPath` names it. It has kHelperTimeoutMs to answer (its own
// bounds: a second for a safe point, five for the calls); after that it is killed and the error says so, as it does
// when a seccomp filter kills it (SIGSYS).
//
// Thread: any; blocks until the helper exits.
Result<InjectReport> injectWithHelper(const InjectRequest &request, const std::string &helperPath = {});

inline constexpr int kHelperTimeoutMs = 10'000;
// The helper's nice value, where the profiler may set it (inject_client.cpp says why).
inline constexpr int kHelperNice = -20;
inline constexpr const char *kInjectHelperName = "emberline-inject";

std::string defaultInjectHelperPath();

// The helper's command line (without the program) and its parser, which the helper uses:
//   --pid PID [--tid TID] --library PATH --function NAME [--argument TEXT] [--no-load]
std::vector<std::string> injectHelperArguments(const InjectRequest &request);
Result<InjectRequest> parseInjectHelperArguments(const std::vector<std::string> &arguments);

// The helper's answer line (without its newline), and back.
std::string formatInjectAnswer(const Result<InjectReport> &result);
Result<InjectReport> parseInjectAnswer(const std::string &line);

} // namespace emberline::engine
