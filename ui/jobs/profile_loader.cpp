#include "ui/jobs/profile_loader.h"

#include "ui/common/logging.h"

#include <QtConcurrent/QtConcurrentRun>

namespace emberline::ui {

ProfileLoader::ProfileLoader(QObject *parent) : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcherBase::finished, this, &ProfileLoader::onFinished);
}

ProfileLoader::~ProfileLoader()
{
    if (m_watcher.isRunning()) {
        cancel();
        m_watcher.waitForFinished();
    }
}

void ProfileLoader::start(const QString &path)
{
    if (m_watcher.isRunning())
        cancel();
    m_watcher.waitForFinished();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    engine::PprofReadOptions options;
    options.cancel = m_cancel.get();
    options.progress = [this, lastPercent = -1](double fraction) mutable {
        const int percent = static_cast<int>(fraction * 100);
        if (percent == lastPercent)
            return;
        lastPercent = percent;
        QMetaObject::invokeMethod(
            this, [this, fraction] { Q_EMIT progressChanged(fraction); }, Qt::QueuedConnection);
    };
    qCDebug(lcUiLoad) << "loading" << path;
    // The cancel flag is kept alive by the lambda, since the options only point to it.
    m_watcher.setFuture(QtConcurrent::run(
        [path, options = std::move(options), cancel = m_cancel] { return engine::loadProfile(path, options); }));
}

void ProfileLoader::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

void ProfileLoader::onFinished()
{
    if (m_watcher.isCanceled() || m_watcher.future().resultCount() == 0) {
        Q_EMIT cancelled();
        return;
    }
    const engine::LoadOutcome outcome = m_watcher.result();
    if (outcome.cancelled) {
        qCDebug(lcUiLoad) << "load cancelled";
        Q_EMIT cancelled();
    } else if (!outcome.loaded) {
        qCWarning(lcUiLoad).noquote() << outcome.error;
        Q_EMIT failed(outcome.error);
    } else {
        Q_EMIT loaded(outcome.loaded);
    }
}

} // namespace emberline::ui
