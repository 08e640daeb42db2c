#pragma once

#include "engine/import/load_profile.h"

#include <QFutureWatcher>
#include <QObject>

#include <atomic>
#include <memory>

namespace emberline::ui {

// Loads one pprof file on the thread pool: reading, then the frame table and thread index. Progress from the
// reader is queued to the GUI thread (at most once per percent); cancel() sets the reader's cancel flag.
//
// Thread: lives on the GUI thread and emits there. Its destructor cancels and waits for the worker, which posts
// progress to this object and so must not outlive it; the reader checks the flag often, so the wait is short.
class ProfileLoader : public QObject {
    Q_OBJECT
public:
    explicit ProfileLoader(QObject *parent = nullptr);
    ~ProfileLoader() override;

    void start(const QString &path);
    void cancel();
    bool isRunning() const { return m_watcher.isRunning(); }

Q_SIGNALS:
    void progressChanged(double fraction);
    void loaded(std::shared_ptr<const engine::LoadedProfile> profile);
    void failed(const QString &message);
    void cancelled();

private:
    void onFinished();

    QFutureWatcher<engine::LoadOutcome> m_watcher;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

} // namespace emberline::ui
