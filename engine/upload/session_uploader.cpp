#include "engine/upload/session_uploader.h"

#include <unistd.h>

#include <string>

namespace emberline::engine {
namespace {

// /proc/<pid>/exe is a symlink read, not I/O that can stall.
std::string executableOf(int pid)
{
    char buffer[4096];
    const std::string link = "/proc/" + std::to_string(pid) + "/exe";
    const ssize_t n = readlink(link.c_str(), buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

} // namespace

Result<std::shared_ptr<SessionUploader>> SessionUploader::create(UploadSettings settings,
                                                                 Uploader::RecordCallback onRecord)
{
    auto uploader = Uploader::create(std::move(settings), std::move(onRecord));
    if (!uploader)
        return uploader.error();
    return std::shared_ptr<SessionUploader>(new SessionUploader(std::move(uploader).value()));
}

void SessionUploader::setTarget(int pid, const std::string &executable)
{
    std::string exe = !executable.empty() ? executable : pid > 0 ? executableOf(pid) : std::string();
    std::lock_guard lock(m_mutex);
    if (pid > 0)
        m_target.pid = pid;
    if (!exe.empty())
        m_target.executable = std::move(exe);
}

void SessionUploader::addFlush(std::shared_ptr<const Flush> flush)
{
    if (!m_submitting.load() || m_finished.load())
        return;
    UploadTarget target;
    {
        std::lock_guard lock(m_mutex);
        target = m_target;
    }
    m_uploader->submit(std::move(flush), target); // only locks and queues
}

bool SessionUploader::finish(std::chrono::milliseconds deadline)
{
    m_finished.store(true);
    return m_uploader->finish(deadline);
}

} // namespace emberline::engine
