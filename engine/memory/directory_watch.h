#pragma once

#include <string>

namespace emberline::engine {

// Whether files were made in a directory (created there, or renamed into it) since the last look, so that the
// directory is listed only then: the rings' directory is looked at on every read of the rings, and a new ring comes
// a few times a session.
//
// Thread: one at a time.
class DirectoryWatch {
public:
    explicit DirectoryWatch(const std::string &directory);
    ~DirectoryWatch();
    DirectoryWatch(const DirectoryWatch &) = delete;
    DirectoryWatch &operator=(const DirectoryWatch &) = delete;

    // True at the first look, when something was made since the last one (or the kernel lost count of its events),
    // and always where the kernel cannot watch the directory.
    bool madeSinceLastLook();
    // Readable while something made there has not been looked at yet: a reader that naps may wait on it. -1 where the
    // directory is not watched.
    int fd() const { return m_fd; }

private:
    int m_fd = -1;
    bool m_looked = false;
};

} // namespace emberline::engine
