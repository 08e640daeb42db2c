#include "ui/jobs/summary_cache.h"

#include "ui/common/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>
#include <vector>

namespace emberline::ui {
namespace {

constexpr int kFormat = 1;

// One file for every SummaryCache of the process: two start pages (two windows) write it in turn.
QMutex g_fileMutex;

QString keyOf(const QString &path)
{
    return QFileInfo(path).absoluteFilePath();
}

qint64 msOf(const QDateTime &time)
{
    return time.isValid() ? time.toMSecsSinceEpoch() : -1;
}

QDateTime timeOf(const QJsonValue &value)
{
    const qint64 ms = value.toInteger(-1);
    return ms >= 0 ? QDateTime::fromMSecsSinceEpoch(ms) : QDateTime();
}

QJsonObject toJson(const ProfileSummary &s, qint64 usedMs)
{
    return QJsonObject{{QStringLiteral("path"), s.path},
                       {QStringLiteral("session"), s.session},
                       {QStringLiteral("size"), static_cast<qint64>(s.size)},
                       {QStringLiteral("modified"), msOf(s.modified)},
                       {QStringLiteral("recorded"), msOf(s.recorded)},
                       {QStringLiteral("durationNs"), static_cast<qint64>(s.durationNs)},
                       {QStringLiteral("program"), s.program},
                       {QStringLiteral("topFunction"), s.topFunction},
                       {QStringLiteral("topShare"), s.topShare},
                       {QStringLiteral("sampleType"), s.sampleType},
                       {QStringLiteral("error"), s.error},
                       {QStringLiteral("used"), usedMs}};
}

ProfileSummary fromJson(const QJsonObject &o)
{
    ProfileSummary s;
    s.path = o.value(QStringLiteral("path")).toString();
    s.session = o.value(QStringLiteral("session")).toBool();
    s.size = o.value(QStringLiteral("size")).toInteger(-1);
    s.modified = timeOf(o.value(QStringLiteral("modified")));
    s.recorded = timeOf(o.value(QStringLiteral("recorded")));
    s.durationNs = o.value(QStringLiteral("durationNs")).toInteger();
    s.program = o.value(QStringLiteral("program")).toString();
    s.topFunction = o.value(QStringLiteral("topFunction")).toString();
    s.topShare = o.value(QStringLiteral("topShare")).toDouble();
    s.sampleType = o.value(QStringLiteral("sampleType")).toString();
    s.error = o.value(QStringLiteral("error")).toString();
    return s;
}

} // namespace

SummaryCache::SummaryCache(QString file) : m_file(std::move(file)) {}

QString SummaryCache::defaultFile()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation))
        .filePath(QStringLiteral("recent-summaries.json"));
}

FileStamp SummaryCache::stampOf(const QString &path)
{
    const QFileInfo info(path);
    FileStamp stamp;
    if (!info.exists())
        return stamp;
    stamp.modified = info.lastModified();
    if (!info.isDir()) {
        stamp.size = info.size();
        return stamp;
    }
    const QFileInfo profile(QDir(path).filePath(QStringLiteral("profile.pprof")));
    if (profile.exists()) {
        stamp.size = profile.size();
        stamp.modified = std::max(stamp.modified, profile.lastModified());
    }
    return stamp;
}

std::optional<ProfileSummary> SummaryCache::find(const QString &path, const FileStamp &stamp)
{
    const QMutexLocker lock(&m_mutex);
    loadLocked();
    const auto it = m_entries.find(keyOf(path));
    if (it == m_entries.end() || !stamp.modified.isValid() ||
        !(FileStamp{it->summary.size, it->summary.modified} == stamp))
        return std::nullopt;
    it->usedMs = QDateTime::currentMSecsSinceEpoch();
    ProfileSummary summary = it->summary;
    summary.path = path; // as the caller names it
    return summary;
}

void SummaryCache::store(const ProfileSummary &summary)
{
    const QMutexLocker lock(&m_mutex);
    loadLocked();
    m_entries.insert(keyOf(summary.path), Entry{summary, QDateTime::currentMSecsSinceEpoch()});
    writeLocked();
}

void SummaryCache::loadLocked()
{
    if (m_loaded)
        return;
    m_loaded = true;
    m_entries = readFile();
}

QHash<QString, SummaryCache::Entry> SummaryCache::readFile() const
{
    QHash<QString, Entry> entries;
    const QMutexLocker lock(&g_fileMutex);
    QFile file(m_file);
    if (!file.open(QIODevice::ReadOnly))
        return entries; // none yet
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    if (root.value(QStringLiteral("format")).toInt() != kFormat)
        return entries; // another layout, or damaged: read again
    const QJsonArray summaries = root.value(QStringLiteral("summaries")).toArray();
    for (const QJsonValue value : summaries) {
        const QJsonObject o = value.toObject();
        const Entry entry{fromJson(o), o.value(QStringLiteral("used")).toInteger()};
        if (!entry.summary.path.isEmpty())
            entries.insert(keyOf(entry.summary.path), entry);
    }
    return entries;
}

void SummaryCache::writeLocked()
{
    // What another start page (or another run) wrote since is kept, unless this one knows the file better.
    const QHash<QString, Entry> written = readFile();
    for (auto it = written.begin(); it != written.end(); ++it) {
        const auto ours = m_entries.find(it.key());
        if (ours == m_entries.end() || ours->usedMs < it->usedMs)
            m_entries.insert(it.key(), it.value());
    }
    std::vector<const Entry *> kept;
    for (const Entry &entry : std::as_const(m_entries))
        kept.push_back(&entry);
    std::sort(kept.begin(), kept.end(), [](const Entry *a, const Entry *b) { return a->usedMs > b->usedMs; });
    if (kept.size() > static_cast<size_t>(kMaxEntries))
        kept.resize(kMaxEntries);
    QJsonArray summaries;
    for (const Entry *entry : kept)
        summaries.append(toJson(entry->summary, entry->usedMs));
    const QByteArray json =
        QJsonDocument(QJsonObject{{QStringLiteral("format"), kFormat}, {QStringLiteral("summaries"), summaries}})
            .toJson(QJsonDocument::Compact);

    const QMutexLocker lock(&g_fileMutex);
    if (!QDir().mkpath(QFileInfo(m_file).absolutePath())) {
        qCWarning(lcUiLoad) << "cannot create the folder of" << m_file;
        return;
    }
    QSaveFile file(m_file);
    if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size() || !file.commit())
        qCWarning(lcUiLoad) << "cannot write the recent files' summaries to" << m_file << file.errorString();
}

} // namespace emberline::ui
