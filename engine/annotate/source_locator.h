#pragma once

#include "engine/common/result.h"

#include <optional>
#include <string>
#include <vector>

namespace emberline::engine {

// A source file's text, split into lines (line N is lines[N - 1]).
struct SourceFile {
    std::string path; // where it was found
    std::vector<std::string> lines;
};

// Finds the source file of a recorded path: the path itself first, then under each source root the user added
// (for binaries built elsewhere), trying the recorded path's suffixes from the longest: under root R,
// /build/src/app/main.cpp is looked up as R/build/src/app/main.cpp, R/src/app/main.cpp, R/app/main.cpp and
// R/main.cpp.
//
// Thread: any; it only reads the file system.
class SourceLocator {
public:
    explicit SourceLocator(std::vector<std::string> roots = {}) : m_roots(std::move(roots)) {}

    std::optional<std::string> find(const std::string &recordedPath) const;
    // The file's lines, or an error saying where it was looked for (or why it could not be read).
    Result<SourceFile> load(const std::string &recordedPath) const;

private:
    std::vector<std::string> m_roots;
};

} // namespace emberline::engine
