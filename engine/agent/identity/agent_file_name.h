#pragma once

// The agent's file name, and the one rule that tells it (or a copy of it) from other modules: for the agent (its GOT
// pass leaves another copy alone) and the session (the agent's frames, its modules). Plain C++, no library: the agent
// links no C++ runtime.

namespace emberline::agent {

// The agent's file name: its frames lead every allocation's stack, and the session leaves them out.
inline constexpr const char *kLibraryName = "libemberline_agent.so";
// Whether a file name (no folder) names the agent: its own, or a copy the injector placed where a program can open
// it (engine/inject/library_path.h: "libemberline_agent-<16 hex digits>.so", named by its contents).
constexpr bool isAgentFileName(const char *name, unsigned long length)
{
    constexpr char kStem[] = "libemberline_agent";
    constexpr unsigned long kStemLength = sizeof kStem - 1;
    constexpr unsigned long kHashDigits = 16;
    if (length < kStemLength + 3)
        return false;
    for (unsigned long i = 0; i < kStemLength; ++i)
        if (name[i] != kStem[i])
            return false;
    const char *rest = name + kStemLength;
    const unsigned long restLength = length - kStemLength;
    const auto endsSo = [](const char *end) { return end[0] == '.' && end[1] == 's' && end[2] == 'o'; };
    if (restLength == 3)
        return endsSo(rest);
    if (restLength != 1 + kHashDigits + 3 || rest[0] != '-' || !endsSo(rest + 1 + kHashDigits))
        return false;
    for (unsigned long i = 1; i <= kHashDigits; ++i) {
        const char c = rest[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}
static_assert(isAgentFileName("libemberline_agent.so", 21));
static_assert(isAgentFileName("libemberline_agent-0123456789abcdef.so", 38));
static_assert(!isAgentFileName("libemberline_agent.so.1", 23));
static_assert(!isAgentFileName("libemberline_agent-0123456789abcdeg.so", 38));

} // namespace emberline::agent
