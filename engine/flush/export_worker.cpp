#include "engine/flush/export_worker.h"

#include "engine/common/clock.h"

#include <ctime>

namespace emberline::engine {

ExportWorker::ExportWorker(ExporterOptions options, FlushCallback onFlush, ErrorCallback onError)
    : m_exporter(std::move(options)), m_onFlush(std::move(onFlush)), m_onError(std::move(onError))
{
    m_worker.start({.item = [this](FlushInput &input) { exportOne(input); }});
}

ExportWorker::~ExportWorker()
{
    if (!m_finished)
        (void)finish();
}

void ExportWorker::submit(FlushInput input)
{
    m_worker.post(std::move(input));
}

void ExportWorker::exportOne(const FlushInput &input)
{
    auto flush = m_exporter.exportFlush(input);
    if (!flush) {
        if (m_onError)
            m_onError(flush.error());
    } else if (flush.value() && m_onFlush) {
        m_onFlush(flush.value());
    }
    m_cpuNs.store(clockNs(CLOCK_THREAD_CPUTIME_ID), std::memory_order_relaxed);
}

Result<std::string> ExportWorker::finish()
{
    m_worker.stop(WorkerStop::Drain);
    m_finished = true;
    return m_exporter.writeSessionProfile();
}

uint32_t ExportWorker::flushesReported() const
{
    return m_exporter.flushesReported();
}

} // namespace emberline::engine
