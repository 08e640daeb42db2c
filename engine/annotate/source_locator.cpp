#include "engine/annotate/source_locator.h"

#include <filesystem>
#include <fstream>

namespace emberline::engine {
namespace {

// Text files only, and not huge ones: a listing never needs more.
constexpr std::uintmax_t kMaxSourceBytes = 64u << 20;

bool isRegularFile(const std::filesystem::path &p)
{
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
}

Result<std::vector<std::string>> readLines(const std::string &path)
{
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec)
        return makeError(Error::Code::Io, path + ": " + ec.message());
    if (size > kMaxSourceBytes)
        return makeError(Error::Code::Limit, path + ": larger than 64 MiB, not read as source");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(Error::Code::Io, path + ": cannot be opened");
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.find('\0') != std::string::npos)
            return makeError(Error::Code::Format, path + ": not a text file");
        lines.push_back(std::move(line));
    }
    return lines;
}

} // namespace

std::optional<std::string> SourceLocator::find(const std::string &recordedPath) const
{
    if (recordedPath.empty())
        return std::nullopt;
    if (isRegularFile(recordedPath))
        return recordedPath;
    const std::filesystem::path recorded = std::filesystem::path(recordedPath).relative_path();
    for (const std::string &root : m_roots) {
        // The recorded path without its first 0, 1, 2, ... components.
        for (auto it = recorded.begin(); it != recorded.end(); ++it) {
            std::filesystem::path suffix;
            for (auto part = it; part != recorded.end(); ++part)
                suffix /= *part;
            const std::filesystem::path candidate = std::filesystem::path(root) / suffix;
            if (isRegularFile(candidate))
                return candidate.string();
        }
    }
    return std::nullopt;
}

Result<SourceFile> SourceLocator::load(const std::string &recordedPath) const
{
    const std::optional<std::string> path = find(recordedPath);
    if (!path) {
        std::string where = "not found at " + (recordedPath.empty() ? std::string("(no file recorded)") : recordedPath);
        if (!m_roots.empty())
            where += " nor under " + std::to_string(m_roots.size()) + " source root(s)";
        return makeError(Error::Code::Io, where);
    }
    auto lines = readLines(*path);
    if (!lines)
        return lines.error();
    return SourceFile{*path, std::move(lines).value()};
}

} // namespace emberline::engine
