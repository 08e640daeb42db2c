#include "engine/import/perf_script_reader.h"

#include "engine/common/strings.h"
#include "engine/import/frame_text_cache.h"
#include "engine/import/sample_frames_cache.h"
#include "engine/import/text_format.h"

#include <array>
#include <charconv>
#include <cstring>
#include <optional>
#include <vector>

namespace emberline::engine {

// A blank-separated word of a header line and where it starts.
struct PerfScriptToken {
    std::string_view text;
    size_t start;
};

namespace {

struct Header {
    std::string_view comm;
    int64_t tid = 0;
    std::optional<int64_t> period;
    std::string_view event;
    std::string_view rest; // what follows the event on the line (a frame, without -g)
};

bool isDigits(std::string_view s)
{
    for (const char c : s) {
        if (c < '0' || c > '9')
            return false;
    }
    return !s.empty();
}

// Which bytes are hex digits, by table: the address of every frame line is checked with it.
constexpr std::array<bool, 256> kHexDigits = [] {
    std::array<bool, 256> table{};
    for (int c = 0; c < 256; ++c)
        table.at(c) = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return table;
}();

int64_t toInt(std::string_view s)
{
    int64_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

// "12.345678:" — the timestamp, which anchors the header: what precedes it is comm, tid and cpu.
bool isTimestamp(std::string_view s)
{
    if (s.size() < 4 || s.back() != ':')
        return false;
    s.remove_suffix(1);
    const size_t dot = s.find('.');
    return dot != std::string_view::npos && isDigits(s.substr(0, dot)) && isDigits(s.substr(dot + 1));
}

// Splits `line` at blanks into `out` (cleared first; its storage is reused from line to line).
void splitPerfScriptTokens(std::string_view line, std::vector<PerfScriptToken> &out)
{
    out.clear();
    for (size_t pos = 0; pos < line.size();) {
        while (pos < line.size() && isBlank(line[pos]))
            ++pos;
        if (pos == line.size())
            break;
        const size_t length = firstBlank(line.substr(pos));
        out.push_back({line.substr(pos, length), pos});
        pos += length;
    }
}

std::optional<Header> parseHeader(std::string_view line, std::vector<PerfScriptToken> &t)
{
    splitPerfScriptTokens(line, t);
    for (size_t i = 2; i < t.size(); ++i) {
        if (!isTimestamp(t[i].text))
            continue;
        size_t pidIndex = i - 1;
        if (t[pidIndex].text.front() == '[' && t[pidIndex].text.back() == ']' && pidIndex >= 2)
            --pidIndex;
        std::string_view pid = t[pidIndex].text;
        if (const size_t slash = pid.find('/'); slash != std::string_view::npos)
            pid = pid.substr(slash + 1); // pid/tid: the thread
        if (!isDigits(pid) || pidIndex == 0)
            return std::nullopt;
        Header h;
        h.comm = trimTrailingBlanks(line.substr(0, t[pidIndex].start));
        h.tid = toInt(pid);
        size_t next = i + 1;
        if (next < t.size() && isDigits(t[next].text))
            h.period = toInt(t[next++].text);
        if (next >= t.size() || t[next].text.size() < 2 || t[next].text.back() != ':')
            return std::nullopt;
        h.event = t[next].text.substr(0, t[next].text.size() - 1);
        const size_t restStart = t[next].start + t[next].text.size();
        h.rest = skipBlanks(line.substr(restStart));
        return h;
    }
    return std::nullopt;
}

struct FrameLine {
    uint64_t address = 0;
    std::string_view symbol;
    std::string_view dso;
};

// "55d5c1a2b3c4 func+0x12 (/path/bin)": the symbol may hold spaces and parentheses (C++), the dso is the last
// parenthesised group and ends the line.
std::optional<FrameLine> parseFrame(std::string_view line)
{
    line = trimTrailingBlanks(skipBlanks(line));
    const size_t space = firstBlank(line);
    if (space == line.size() || line.back() != ')')
        return std::nullopt;
    FrameLine f;
    const std::string_view address = line.substr(0, space);
    const auto [end, ec] = std::from_chars(address.data(), address.data() + address.size(), f.address, 16);
    if (ec != std::errc() || end != address.data() + address.size())
        return std::nullopt;
    const size_t open = line.rfind(" (");
    if (open == std::string_view::npos || open < space)
        return std::nullopt;
    f.dso = line.substr(open + 2, line.size() - open - 3);
    f.symbol = skipBlanks(line.substr(space, open - space));
    if (const size_t plus = f.symbol.rfind("+0x"); plus != std::string_view::npos && plus > 0) {
        const std::string_view offset = f.symbol.substr(plus + 3);
        if (!offset.empty() && offset.find_first_not_of("0123456789abcdef") == std::string_view::npos)
            f.symbol = f.symbol.substr(0, plus);
    }
    if (f.symbol.empty())
        return std::nullopt;
    return f;
}

std::string eventUnit(std::string_view event)
{
    const std::string_view base = event.substr(0, event.find(':'));
    return base == "cpu-clock" || base == "task-clock" ? "nanoseconds" : "count";
}

} // namespace

struct PerfScriptParser::State {
    std::string name;
    std::unique_ptr<TextProfileBuilder> builder;
    std::string event; // the first sample's
    size_t eventLine = 0;
    bool hasPeriod = false;
    bool inSample = false;
    int64_t tid = 0;
    std::string comm;
    std::vector<uint32_t> stack;
    std::vector<int64_t> values;
    std::vector<PerfScriptToken> headerTokens; // scratch for parseHeader
    size_t samples = 0;
    // Frame text after the address (" sym+0x12 (dso)") -> location: most frames repeat, and are parsed once.
    FrameTextCache frameLocations;
    // Whole samples' frame lines -> locations (takeKnownFrames). The sample being read may be one to add: its frame
    // text, and the number of the empty line that must end it with every frame read.
    SampleFramesCache sampleFrames;
    bool framesMayFollow = false; // the last line fed was a header without a frame
    std::string newFrameText;
    size_t newFrameLines = 0;
    size_t newFrameEnd = 0;

    Error fail(size_t number, std::string_view line, const std::string &why) const
    {
        return makeError(Error::Code::Format, name + ": " + lineContext(number, line) + ": " + why);
    }

    void endSample()
    {
        if (inSample && !stack.empty()) {
            builder->addSample(stack, values, tid, comm);
            ++samples;
        }
        inSample = false;
    }

    Status startSample(const Header &h, std::string_view line, size_t number)
    {
        if (!builder) {
            event = std::string(h.event);
            eventLine = number;
            hasPeriod = h.period.has_value();
            std::vector<TextProfileBuilder::SampleType> types{{"samples", "count"}};
            if (hasPeriod)
                types.push_back({std::string(h.event.substr(0, h.event.find(':'))), eventUnit(h.event)});
            builder = std::make_unique<TextProfileBuilder>(types);
            values.assign(types.size(), 0);
        } else if (h.event != event) {
            return fail(number, line,
                        "event '" + std::string(h.event) + "' differs from '" + event + "' (line " +
                            std::to_string(eventLine) +
                            "): one profile holds one event; pick one "
                            "with `perf script --event " +
                            event + "`");
        } else if (h.period.has_value() != hasPeriod) {
            return fail(number, line, "a period on some samples and not on others");
        }
        inSample = true;
        tid = h.tid;
        comm.assign(h.comm);
        stack.clear();
        values[0] = 1;
        if (hasPeriod)
            values[1] = *h.period;
        return Ok{};
    }

    // `frameText` is "  address symbol+offset (dso)". A frame seen before is known by the text after its address,
    // which was checked as text then; only the blanks and hex digits in front of it are checked again.
    Status addFrame(std::string_view frameText, std::string_view line, size_t number)
    {
        const char *p = frameText.data();
        const char *const end = p + frameText.size();
        while (p < end && isBlank(*p))
            ++p;
        const char *const address = p;
        while (p < end && kHexDigits.at(static_cast<unsigned char>(*p)))
            ++p;
        bool hexAddress = p > address;
        if (p < end && !isBlank(*p)) { // not hex: the address runs on to the first blank
            hexAddress = false;
            while (p < end && !isBlank(*p))
                ++p;
        }
        const std::string_view key(p, static_cast<size_t>(end - p));
        if (const uint32_t *known = key.empty() ? nullptr : frameLocations.find(key)) {
            if (!hexAddress)
                return fail(number, line, "not a call-chain frame (`address symbol (dso)`): a damaged address?");
            stack.push_back(*known);
            return Ok{};
        }
        if (!isTextLine(line))
            return fail(number, line, "binary data, not perf script text");
        const std::optional<FrameLine> f = parseFrame(frameText);
        if (!f)
            return fail(number, line, "not a call-chain frame (`address symbol (dso)`): a cut or damaged line?");
        const bool inlined = f->dso == "inlined";
        const bool unknown = f->symbol == "[unknown]";
        std::string symbol(f->symbol);
        if (unknown) {
            const std::string_view dso =
                f->dso.substr(f->dso.rfind('/') == std::string_view::npos ? 0 : f->dso.rfind('/') + 1);
            symbol = "[unknown] (" + std::string(dso) + ")";
        }
        stack.push_back(builder->location(symbol, inlined ? std::string_view() : f->dso, unknown ? f->address : 0));
        if (!unknown) // an unknown frame is told apart by its address, which the key leaves out
            frameLocations.insert(key, stack.back());
        return Ok{};
    }
};

PerfScriptParser::PerfScriptParser(std::string name) : m_state(std::make_unique<State>())
{
    m_state->name = std::move(name);
}

PerfScriptParser::~PerfScriptParser() = default;

size_t PerfScriptParser::samples() const
{
    return m_state->samples;
}

bool PerfScriptParser::isSampleHeader(std::string_view line)
{
    std::vector<PerfScriptToken> scratch;
    return parseHeader(line, scratch).has_value();
}

Status PerfScriptParser::feed(std::string_view line, size_t number)
{
    State &s = *m_state;
    s.framesMayFollow = false;
    if (skipBlanks(line).empty()) {
        if (number == s.newFrameEnd && s.inSample && s.stack.size() == s.newFrameLines)
            s.sampleFrames.insert(s.newFrameText, s.stack);
        s.endSample();
        return Ok{};
    }
    if (line.front() == ' ' || line.front() == '\t') { // a frame: addFrame checks it as text
        if (!s.inSample)
            return s.fail(number, line,
                          isTextLine(line) ? "a call-chain frame outside of a sample"
                                           : "binary data, not perf script text");
        return s.addFrame(line, line, number);
    }
    if (!isTextLine(line))
        return s.fail(number, line, "binary data, not perf script text");
    if (line.front() == '#' && !s.inSample)
        return Ok{};
    s.endSample();
    const std::optional<Header> h = parseHeader(line, s.headerTokens);
    if (!h)
        return s.fail(number, line, "not a perf script sample header (`comm tid time: period event:`)");
    if (Status st = s.startSample(*h, line, number); !st)
        return st;
    if (!h->rest.empty() && !parseFrame(h->rest))
        return s.fail(number, line,
                      "event '" + std::string(h->event) + "' carries data that is not a frame: only " +
                          "sampling events (cpu-clock, cycles, ...) with their call chains are imported");
    if (!h->rest.empty())
        return s.addFrame(h->rest, line, number);
    s.framesMayFollow = true;
    s.newFrameEnd = 0;
    return Ok{};
}

size_t PerfScriptParser::takeKnownFrames(std::string_view ahead, size_t &lines)
{
    State &s = *m_state;
    if (!s.framesMayFollow || !s.sampleFrames.worthAsking())
        return 0;
    s.framesMayFollow = false;
    SampleFramesCache::Block block;
    const std::span<const uint32_t> *known = s.sampleFrames.findAtFront(ahead, block);
    if (block.lines == 0)
        return 0;
    if (known) {
        // The same bytes as an earlier sample's frames, which were read line by line without an error then: the
        // same locations, and the empty line after them ends the sample.
        s.stack.assign(known->begin(), known->end());
        s.endSample();
        lines += block.lines + 1;
        return block.text.size() + 1;
    }
    s.newFrameText.assign(block.text);
    s.newFrameLines = block.lines;
    s.newFrameEnd = lines + block.lines + 1;
    return 0;
}

Status PerfScriptParser::append(PerfScriptParser &&later)
{
    State &s = *m_state;
    State &l = *later.m_state;
    s.endSample();
    l.endSample();
    if (!l.builder)
        return Ok{};
    if (!s.builder) {
        s.builder = std::move(l.builder);
        s.event = l.event;
        s.eventLine = l.eventLine;
        s.hasPeriod = l.hasPeriod;
        s.values = l.values;
        s.samples += l.samples;
        return Ok{};
    }
    if (l.event != s.event || l.hasPeriod != s.hasPeriod)
        return makeError(Error::Code::Format, s.name + ": the parts of the text hold different events or periods");
    s.builder->append(*l.builder);
    s.samples += l.samples;
    return Ok{};
}

Result<Profile> PerfScriptParser::finish()
{
    State &s = *m_state;
    s.endSample();
    if (!s.builder || s.samples == 0)
        return makeError(Error::Code::Format, s.name + ": no sample with a call chain in the perf script output");
    return s.builder->take();
}

} // namespace emberline::engine
