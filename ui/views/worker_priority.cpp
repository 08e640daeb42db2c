#include "ui/views/worker_priority.h"

#include "ui/logging.h"

#include <QCoreApplication>
#include <QThread>

#include <sys/resource.h>
#include <unistd.h>

namespace emberline::ui {

void lowerWorkerPriority()
{
    constexpr int kNiceIncrement = 5;
    thread_local bool lowered = false;
    if (lowered)
        return;
    lowered = true;
    if (QCoreApplication::instance() && QThread::currentThread() == QCoreApplication::instance()->thread())
        return; // the GUI thread keeps its priority (a pool may run a task on the thread that waits for it)
    // On Linux a nice value belongs to the thread named by its thread id; raising it needs no privilege.
    const auto tid = static_cast<id_t>(::gettid());
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, tid);
    if (errno != 0 || ::setpriority(PRIO_PROCESS, tid, current + kNiceIncrement) != 0)
        qCDebug(lcUiAnalysis) << "cannot lower a worker thread's priority:" << qt_error_string(errno);
}

} // namespace emberline::ui
