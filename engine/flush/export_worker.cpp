#include "engine/flush/export_worker.h"

#include "engine/common/clock.h"

#include <ctime>

namespace emberline::engine {

ExportWorker::ExportWorker(ExporterOptions options, FlushCallback onFlush, ErrorCallback onError)
    : m_exporter(std::move(options)), m_onFlush(std::move(onFlush)), m_onError(std::move(onError))
{
    m_thread = std::thread([this] { run(); });
}

ExportWorker::~ExportWorker()
{
    if (m_thread.joinable())
        (void)finish();
}

void ExportWorker::submit(FlushInput input)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(input));
    }
    m_wake.notify_one();
}

void ExportWorker::run()
{
    while (true) {
        FlushInput input;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty())
                return;
            input = std::move(m_queue.front());
            m_queue.pop_front();
        }
        auto flush = m_exporter.exportFlush(input);
        if (!flush) {
            if (m_onError)
                m_onError(flush.error());
        } else if (flush.value() && m_onFlush) {
            m_onFlush(flush.value());
        }
        m_cpuNs.store(clockNs(CLOCK_THREAD_CPUTIME_ID), std::memory_order_relaxed);
    }
}

Result<std::string> ExportWorker::finish()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_one();
    if (m_thread.joinable())
        m_thread.join();
    return m_exporter.writeSessionProfile();
}

uint32_t ExportWorker::flushesReported() const
{
    return m_exporter.flushesReported();
}

} // namespace emberline::engine
