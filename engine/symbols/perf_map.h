#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// The symbols a JIT compiler writes for its generated code in /tmp/perf-PID.map (node --perf-basic-prof,
// LuaJIT, the JVM's perf agents, .NET with DOTNET_PerfMapEnabled): one "START SIZE name" line per code blob,
// addresses in hex, appended while the program runs. The file is read incrementally: refresh() reads what was
// appended since (complete lines only), so code compiled after the first read is named after the next refresh.
// When blobs overlap (code freed and the memory reused), the line written last wins, as in perf.
//
// Bad input never throws or crashes: malformed lines are skipped and counted, a file over the size limit is
// read no further, and a file that shrinks (rewritten by a new process with the same pid) is read again.
//
// Thread: not synchronised; owned by the exporter thread.
class PerfMap {
public:
    struct Limits {
        uint64_t maxBytes = uint64_t(256) << 20; // stop reading past this
        size_t maxLineBytes = size_t(64) * 1024; // a longer line is malformed
    };

    explicit PerfMap(std::string path) : PerfMap(std::move(path), Limits()) {}
    PerfMap(std::string path, Limits limits) : m_path(std::move(path)), m_limits(limits) {}

    // The name of the code blob holding `address`, or "", as of the last refresh().
    std::string_view lookup(uint64_t address) const;
    // Reads what was appended since the last read; false when the file cannot be opened.
    bool refresh();

    const std::string &path() const { return m_path; }
    size_t entries() const { return m_entries.size(); }
    size_t malformedLines() const { return m_malformed; }
    bool truncatedAtLimit() const { return m_overLimit; }
    // Times the file shrank while it was being read (rewritten): the names read before were dropped.
    size_t rewrites() const { return m_rewrites; }
    // A line for the record summary or the log: what was read and what was wrong with it.
    std::string describe() const;

private:
    struct Entry {
        uint64_t start = 0;
        uint64_t end = 0;
        uint64_t order = 0; // line number: later lines win
        uint32_t name = 0;  // offset into m_names
        uint32_t nameSize = 0;
    };
    void parse(std::string_view text);
    void parseLine(std::string_view line);

    std::string m_path;
    Limits m_limits;
    std::vector<Entry> m_entries; // sorted by start, then order
    std::string m_names;
    uint64_t m_readBytes = 0; // complete lines consumed
    uint64_t m_lines = 0;
    uint64_t m_maxSpan = 0; // the longest blob, bounding the backward scan of a lookup
    size_t m_malformed = 0;
    bool m_overLimit = false;
    bool m_opened = false;
    size_t m_rewrites = 0;
};

} // namespace emberline::engine
