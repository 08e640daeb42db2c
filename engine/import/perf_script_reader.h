#pragma once

#include "engine/common/result.h"
#include "engine/import/text_profile_builder.h"
#include "engine/model/profile.h"
#include "engine/pprof/pprof_reader.h"

#include <memory>
#include <string>
#include <string_view>

namespace emberline::engine {

// Parses `perf script` text, fed one line at a time: a sample header (`comm tid [cpu] time: [period] event:`,
// pid/tid and cpu optional) followed by its call chain, one frame a line (`address symbol+offset (dso)`, leaf
// first), and a blank line. The profile has the sample types samples/count and, when the header carries a
// period, the event's own (cpu-clock and task-clock in nanoseconds, other events as counts), which is the
// default, as perf report's overhead is the share of periods. Each sample is labelled with its thread id and
// name (the comm).
// Errors name the line: a header or frame that cannot be read (a cut line, binary bytes), and an event other
// than the first sample's (one profile holds one event; `perf script --event NAME` picks one).
//
// Thread: owned by the importing thread.
class PerfScriptParser {
public:
    explicit PerfScriptParser(std::string name);
    ~PerfScriptParser();
    PerfScriptParser(const PerfScriptParser &) = delete;
    PerfScriptParser &operator=(const PerfScriptParser &) = delete;

    Status feed(std::string_view line, size_t number);
    // After a line fed: may take the frame lines that follow it in `ahead` and the empty line after them, when the
    // line was a sample's header and those frames are byte for byte those of an earlier sample (which were fed
    // line by line). Returns the bytes taken, and adds their lines to `lines` (the number of the last line fed).
    // Taking them has the effect feeding them would have.
    size_t takeKnownFrames(std::string_view ahead, size_t &lines);
    // Takes in what `later` parsed from the text that follows this parser's (both ending at a sample's end): the
    // samples then are those one parser fed both texts would hold, in the same order. An error when the two hold
    // different events, or periods on one side only; the text read whole names the line.
    Status append(PerfScriptParser &&later);
    Result<Profile> finish();
    size_t samples() const;

    // Whether a line reads as a sample header (used to tell perf script text from folded stacks).
    static bool isSampleHeader(std::string_view line);

private:
    struct State;
    std::unique_ptr<State> m_state;
};

// Reads a file of `perf script` output, in parts on several threads when it is large (see
// perf_script_file_reader.h).
Result<Profile> readPerfScriptFile(const std::string &path, const PprofReadOptions &options = {});

} // namespace emberline::engine
