#pragma once

#include "ui/jobs/profile_summaries.h"

#include <QDateTime>
#include <QHash>
#include <QMutex>
#include <QString>

#include <cstdint>
#include <optional>

namespace emberline::ui {

// What tells that a recent file changed: its size and modification time; for a session folder, its profile.pprof's
// size and the later of the two times (a flush adds a file, a rewrite of profile.pprof changes it in place).
struct FileStamp {
    int64_t size = -1;
    QDateTime modified;
    bool operator==(const FileStamp &other) const { return size == other.size && modified == other.modified; }
};

// The start page's summaries kept from one run of the app to the next: a small JSON file under the cache location
// (QStandardPaths::CacheLocation), each summary under its file's absolute path with the file's stamp when it was read.
// A summary is given back only while the stamp is the same, so that a changed file is read again. It keeps the
// kMaxEntries most recently used. Another instance's summaries written since are merged in when it writes, not lost.
//
// Thread: any; each call locks. find() and store() read and write the file: never on the GUI thread (ProfileSummaries
// calls them from its jobs).
class SummaryCache {
public:
    static constexpr int kMaxEntries = 50;

    explicit SummaryCache(QString file = defaultFile());
    // recent-summaries.json in the cache location.
    static QString defaultFile();
    // The stamp of `path` now (a stat or two).
    static FileStamp stampOf(const QString &path);

    // The summary of `path` as read when the file had `stamp`; none when it was not read, or had another stamp.
    std::optional<ProfileSummary> find(const QString &path, const FileStamp &stamp);
    // Keeps `summary` (under its path, size and modification time) and writes the file.
    void store(const ProfileSummary &summary);

private:
    struct Entry {
        ProfileSummary summary;
        qint64 usedMs = 0; // when it was last stored or found, for trimming
    };
    void loadLocked();
    QHash<QString, Entry> readFile() const;
    void writeLocked();

    const QString m_file;
    QMutex m_mutex;
    bool m_loaded = false;
    QHash<QString, Entry> m_entries; // by absolute path
};

} // namespace emberline::ui
