#include "ui/jobs/view_exporter.h"

#include "engine/analysis/view_profile.h"
#include "engine/pprof/pprof_writer.h"

#include <QFutureWatcher>
#include <QSaveFile>
#include <QtConcurrent/QtConcurrentRun>

namespace emberline::ui {

struct ViewExporter::Pending {
    QFutureWatcher<QString> watcher; // the error message, empty when the file was written
};

ViewExporter::ViewExporter(QObject *parent) : QObject(parent) {}

ViewExporter::~ViewExporter()
{
    if (m_pending)
        m_pending->watcher.waitForFinished(); // writing one file: short, and it must not outlive its inputs' owner
}

bool ViewExporter::isRunning() const
{
    return m_pending && m_pending->watcher.isRunning();
}

void ViewExporter::start(const QString &path, std::function<QString()> work)
{
    if (m_pending)
        m_pending->watcher.waitForFinished();
    m_pending = std::make_unique<Pending>();
    connect(&m_pending->watcher, &QFutureWatcherBase::finished, this, [this, path] {
        const QString error = m_pending->watcher.result();
        if (error.isEmpty())
            Q_EMIT saved(path);
        else
            Q_EMIT failed(tr("%1 could not be saved: %2").arg(path, error));
    });
    m_pending->watcher.setFuture(QtConcurrent::run(std::move(work)));
}

void ViewExporter::saveSvg(const QString &path, QByteArray svg)
{
    start(path, [path, svg = std::move(svg)] {
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(svg) != svg.size() || !file.commit())
            return file.errorString();
        return QString();
    });
}

void ViewExporter::savePng(const QString &path, QImage image)
{
    start(path, [path, image = std::move(image)] {
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return file.errorString();
        if (!image.save(&file, "PNG"))
            return tr("the picture could not be encoded as PNG");
        return file.commit() ? QString() : file.errorString();
    });
}

void ViewExporter::savePprof(const QString &path, std::shared_ptr<const engine::LoadedProfile> source,
                             std::vector<engine::Transform> transforms, engine::SampleFilter filter)
{
    start(path, [path, source = std::move(source), transforms = std::move(transforms), filter = std::move(filter)] {
        auto profile = engine::viewProfile(source, transforms, filter);
        if (!profile)
            return QString::fromStdString(profile.error().message);
        const engine::Status written = engine::writePprofFile(profile.value(), path.toStdString());
        return written ? QString() : QString::fromStdString(written.error().message);
    });
}

} // namespace emberline::ui
