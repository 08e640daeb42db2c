#pragma once

#include "ui/common/latest_job.h"

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <cstdint>
#include <memory>

namespace emberline::ui {

class SummaryCache;

// What the start page says of a recent file or session folder: when it was recorded and for how long, of which
// program, and its hottest function on the sample type it opens on.
struct ProfileSummary {
    QString path;
    bool session = false;   // a session folder
    QDateTime modified;     // the file's modification time when it was read (a folder's: see FileStamp)
    int64_t size = -1;      // the file's size when it was read (a folder's profile.pprof's), -1 unknown
    QDateTime recorded;     // the profile's start time; the modification time when it does not say
    int64_t durationNs = 0; // 0 when the profile does not say
    QString program;        // the main binary's name (its first mapping that is not a library), or ""
    QString topFunction;    // the function with the most self value, or "" (no samples)
    double topShare = 0;    // its self value over the sample type's total
    QString sampleType;     // the type it opens on, which topFunction is ranked by
    QString error;          // why it could not be read ("" when it was)
};

// Reads `path` (a profile file or session folder) and sums it up. A perf.data file is not read (it takes `perf
// script`); its summary has its dates only. Returns early, with `error` set, when cancelled.
//
// Thread: a worker (it reads and analyses the whole profile).
ProfileSummary summarizeProfile(const QString &path, const std::atomic<bool> *cancel);

// Summaries of the recent files, read one after another on the thread pool; each is kept in a SummaryCache (a file
// that outlives the app's run), and given again without reading the profile while its file's size and modification
// time are the same. Looking the cache up, reading the profile and writing the cache all happen in the job.
//
// Thread: lives on the GUI thread and emits there; the reading runs on a pool thread.
class ProfileSummaries : public QObject {
    Q_OBJECT
public:
    // `cacheFile`: where the summaries are kept ("": SummaryCache::defaultFile()).
    explicit ProfileSummaries(QObject *parent = nullptr, const QString &cacheFile = {});
    ~ProfileSummaries() override;

    // Summaries of `paths`, in order; a request replaces the one under way.
    void request(const QStringList &paths);
    bool isRunning() const { return m_job.isPending(); }

Q_SIGNALS:
    void summaryReady(const emberline::ui::ProfileSummary &summary);

private:
    void next();

    LatestJob<ProfileSummary> m_job{this};
    QStringList m_queue;
    std::shared_ptr<SummaryCache> m_cache; // shared with the jobs, which may outlive this object
};

} // namespace emberline::ui
