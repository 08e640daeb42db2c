#include "engine/annotate/source_listing.h"

#include <algorithm>

namespace emberline::engine {
namespace {

int64_t hottest(const std::vector<LineCost> &lines)
{
    const auto it = std::max_element(lines.begin(), lines.end(), [](const LineCost &a, const LineCost &b) {
        return a.total != b.total ? a.total < b.total : a.self < b.self;
    });
    return it == lines.end() ? 0 : it->line;
}

} // namespace

Result<SourceListing> buildSourceListing(const Profile &profile, std::span<const int64_t> perStack, const Frame &frame,
                                         const SourceLocator &locator, const std::atomic<bool> *cancel)
{
    auto functions = LineTable::build(
        profile, perStack, [&](const std::string &name) { return name == frame.name; }, cancel);
    if (!functions)
        return makeError(Error::Code::Cancelled, "cancelled");
    if (functions->empty())
        return makeError(Error::Code::Invalid, "'" + frame.name + "' has no cost with a line number in these samples");
    auto chosen = std::find_if(functions->begin(), functions->end(),
                               [&](const FunctionLines &fn) { return fn.file == frame.file; });
    if (chosen == functions->end())
        chosen = std::max_element(functions->begin(), functions->end(),
                                  [](const FunctionLines &a, const FunctionLines &b) { return a.total < b.total; });

    SourceListing listing;
    listing.functionsWithName = static_cast<int>(functions->size());
    listing.function = std::move(*chosen);
    listing.hottestLine = hottest(listing.function.lines);
    auto source = locator.load(listing.function.file);
    if (!source) {
        listing.sourceProblem = source.error().message;
        return listing;
    }
    const auto fileLines = static_cast<int64_t>(source->lines.size());
    for (const LineCost &line : listing.function.lines) {
        if (line.line < 1 || line.line > fileLines)
            listing.pastEnd.push_back(line);
    }
    listing.source = std::move(source).value();
    return listing;
}

} // namespace emberline::engine
