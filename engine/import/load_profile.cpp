#include "engine/import/load_profile.h"

#include "engine/common/logging.h"
#include "engine/import/open_profile.h"
#include "engine/model/python_frame.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QObject>
#include <QStringList>

namespace emberline::engine {

namespace {

// A session folder: its profile.pprof, or its flushes merged when that is missing or broken; `notice` says so.
Result<Profile> readFolder(const QString &path, const PprofReadOptions &options, SessionTimes times, QString &notice)
{
    auto folder = readSessionFolder(path.toStdString(), options, times);
    if (!folder)
        return folder.error();
    QStringList notes;
    if (folder->fromFlushes)
        notes << QObject::tr("Merged from %1 flush file(s): %2")
                     .arg(folder->flushesMerged)
                     .arg(QString::fromStdString(folder->sessionProfileProblem));
    if (!folder->timesProblem.empty())
        notes << QObject::tr("No heatmap or time ranges: %1; profile.pprof, without them, is shown")
                     .arg(QString::fromStdString(folder->timesProblem));
    for (const std::string &skipped : folder->skipped)
        notes << QObject::tr("Skipped %1").arg(QString::fromStdString(skipped));
    notice = notes.join(QStringLiteral("; "));
    return std::move(folder->profile);
}

} // namespace

LoadOutcome loadProfile(const QString &path, const PprofReadOptions &options, SessionTimes times)
{
    LoadOutcome outcome;
    QElapsedTimer timer;
    timer.start();
    QString notice;
    auto result = QFileInfo(path).isDir() ? readFolder(path, options, times, notice)
                                          : readProfileFile(path.toStdString(), options);
    if (!result) {
        if (result.error().code == Error::Code::Cancelled)
            outcome.cancelled = true;
        else
            outcome.error = QString::fromStdString(result.error().message);
        return outcome;
    }
    auto profile = std::make_shared<const Profile>(std::move(result).value());
    auto loaded = std::make_shared<LoadedProfile>();
    loaded->path = path;
    loaded->notice = notice;
    loaded->frames = std::make_shared<const FrameTable>(*profile);
    loaded->threads = std::make_shared<const ThreadIndex>(*profile);
    loaded->frameNames = frameDisplayNames(*loaded->frames);
    loaded->totals = profile->totals();
    loaded->interpreterFrames = hasInterpreterFunctions(*profile);
    loaded->profile = std::move(profile);
    qCDebug(lcPprof) << "loaded" << path << "in" << timer.elapsed() << "ms";
    outcome.loaded = std::move(loaded);
    return outcome;
}

} // namespace emberline::engine
