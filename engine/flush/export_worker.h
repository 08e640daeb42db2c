#pragma once

#include "engine/common/worker.h"
#include "engine/flush/exporter.h"

#include <atomic>
#include <functional>

namespace emberline::engine {

// Runs the Exporter on its own thread (a Worker), so that symbolization, serialization and disk writes never hold up
// the session thread. Flush inputs are processed in order; each finished Flush goes to the callback (called on
// the exporter thread).
//
// Thread: submit()/finish() from the session thread; everything else on the exporter thread.
class ExportWorker {
public:
    using FlushCallback = std::function<void(std::shared_ptr<const Flush>)>;
    using ErrorCallback = std::function<void(const Error &)>;

    ExportWorker(ExporterOptions options, FlushCallback onFlush, ErrorCallback onError);
    ~ExportWorker();

    void submit(FlushInput input);
    // Processes what is queued, writes the session's merged profile, stops the thread. Returns its path.
    Result<std::string> finish();
    uint32_t flushesReported() const;
    // After finish(): the writes that failed ("<file>: <reason>") and how many flushes are not on disk.
    const std::vector<std::string> &saveErrors() const { return m_exporter.saveErrors(); }
    uint32_t flushesNotSaved() const { return m_exporter.flushesNotSaved(); }
    // After finish(): the unwind and symbol health as of the last flush.
    std::shared_ptr<const UnwindHealth> health() const { return m_exporter.health(); }
    // CPU time the exporter thread has spent so far, as of its last finished flush (any thread may ask).
    int64_t cpuNs() const { return m_cpuNs.load(std::memory_order_relaxed); }

private:
    void exportOne(const FlushInput &input);

    Exporter m_exporter;
    FlushCallback m_onFlush;
    ErrorCallback m_onError;
    std::atomic<int64_t> m_cpuNs{0};
    bool m_finished = false;
    Worker<FlushInput> m_worker{{"export worker"}}; // last: it stops before what it uses goes
};

} // namespace emberline::engine
