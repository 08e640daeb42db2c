#include "engine/import/folded_reader.h"

#include "engine/import/text_format.h"
#include "engine/import/text_profile_builder.h"

#include <algorithm>
#include <charconv>

namespace emberline::engine {
namespace {

// Parses folded lines into a builder, one at a time.
class FoldedParser {
public:
    explicit FoldedParser(std::string name)
        : m_name(std::move(name)), m_builder(std::vector<TextProfileBuilder::SampleType>{{"samples", "count"}})
    {
    }

    Status feed(std::string_view line, size_t number)
    {
        if (line.find_first_not_of(" \t") == std::string_view::npos || line.front() == '#')
            return Ok{};
        if (!isTextLine(line))
            return fail(number, line, "binary data, not a folded stack");
        const size_t space = line.find_last_of(" \t");
        if (space == std::string_view::npos)
            return fail(number, line, "no count: a folded stack line is `root;...;leaf COUNT`");
        const std::string_view count = line.substr(space + 1);
        int64_t value = 0;
        const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), value);
        if (ec != std::errc() || end != count.data() + count.size() || value < 0)
            return fail(number, line, "'" + std::string(count) + "' is not a whole, non-negative count");
        std::string_view frames = line.substr(0, space);
        while (!frames.empty() && (frames.back() == ' ' || frames.back() == '\t'))
            frames.remove_suffix(1);
        if (frames.empty())
            return fail(number, line, "no stack before the count");
        m_stack.clear();
        for (size_t pos = 0;;) {
            const size_t semi = frames.find(';', pos);
            const std::string_view frame = frames.substr(pos, semi == std::string_view::npos ? semi : semi - pos);
            if (frame.empty())
                return fail(number, line, "an empty frame name");
            m_stack.push_back(m_builder.location(frame));
            if (semi == std::string_view::npos)
                break;
            pos = semi + 1;
        }
        std::reverse(m_stack.begin(), m_stack.end()); // the format is root first; samples are leaf first
        m_values[0] = value;
        m_builder.addSample(m_stack, m_values);
        return Ok{};
    }

    Result<Profile> finish()
    {
        if (m_builder.samplesAdded() == 0)
            return makeError(Error::Code::Format, m_name + ": no folded stack in the file");
        return m_builder.take();
    }

private:
    Error fail(size_t number, std::string_view line, const std::string &why) const
    {
        return makeError(Error::Code::Format, m_name + ": " + lineContext(number, line) + ": " + why);
    }

    std::string m_name;
    TextProfileBuilder m_builder;
    std::vector<uint32_t> m_stack;
    std::vector<int64_t> m_values{0};
};

} // namespace

Result<Profile> readFoldedFile(const std::string &path, const PprofReadOptions &options)
{
    return readTextProfileFile<FoldedParser>(path, options);
}

Result<Profile> readFoldedText(std::string_view text, const std::string &name)
{
    FoldedParser parser(name);
    size_t number = 1;
    for (size_t pos = 0; pos < text.size(); ++number) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (Status s = parser.feed(line, number); !s)
            return s.error();
        pos = end + 1;
    }
    return parser.finish();
}

} // namespace emberline::engine
