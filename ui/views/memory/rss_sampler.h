#pragma once

#include "engine/process/process_memory.h"

#include <QObject>

#include <optional>

class QThread;
class QTimer;

namespace emberline::ui {

// Reads the resident memory (RSS) of a session's program and the processes it started every `intervalMs`, on a
// thread of its own (reading /proc is I/O, which the GUI thread never does), and reports each reading on the thread
// the sampler lives on. Readings stop when the program is gone, or when asked.
//
// Thread: created and steered on the GUI thread; the reads on its own QThread.
class RssSampler : public QObject {
    Q_OBJECT
public:
    explicit RssSampler(int intervalMs = 250, QObject *parent = nullptr);
    ~RssSampler() override; // waits for a read under way (microseconds)

    // Samples `pid` and its descendants from now on; 0 stops.
    void setProcess(int pid);
    int process() const { return m_pid; }

Q_SIGNALS:
    // Resident bytes at timeNs (wall clock, ns since the epoch, as flushes are timed).
    void sampled(qint64 timeNs, qint64 bytes);

private:
    void sampleOnce(); // on the sampler's thread

    int m_pid = 0;
    QThread *m_thread = nullptr;
    QObject *m_context = nullptr;                    // lives on m_thread: what runs there is invoked through it
    QTimer *m_timer = nullptr;                       // lives on m_thread
    std::optional<engine::ProcessTreeMemory> m_tree; // touched on m_thread only
};

} // namespace emberline::ui
