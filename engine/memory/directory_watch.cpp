#include "engine/memory/directory_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

namespace emberline::engine {

DirectoryWatch::DirectoryWatch(const std::string &directory)
{
    m_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (m_fd >= 0 && inotify_add_watch(m_fd, directory.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
        close(m_fd);
        m_fd = -1;
    }
}

DirectoryWatch::~DirectoryWatch()
{
    if (m_fd >= 0)
        close(m_fd);
}

bool DirectoryWatch::madeSinceLastLook()
{
    // The events themselves are not needed (an overflow is an event too): only whether there were any.
    bool made = false;
    alignas(inotify_event) char events[4096];
    while (m_fd >= 0 && read(m_fd, events, sizeof events) > 0)
        made = true;
    const bool first = !m_looked;
    m_looked = true;
    return made || first || m_fd < 0;
}

} // namespace emberline::engine
