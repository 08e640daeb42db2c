#include "ui/jobs/profile_summaries.h"

#include "engine/analysis/analysis.h"
#include "engine/analysis/function_table.h"
#include "engine/import/load_profile.h"
#include "engine/import/text_format.h"
#include "ui/common/sample_types.h"
#include "ui/common/short_name.h"
#include "ui/jobs/summary_cache.h"

#include <QFileInfo>
#include <QRegularExpression>

namespace emberline::ui {
namespace {

// The main binary: pprof puts it first; a recording lists its modules as the process mapped them, so the first
// that is not a shared library, the vdso or the kernel.
QString mainProgram(const engine::Profile &profile)
{
    static const QRegularExpression library(QStringLiteral(R"(\.so(\.[0-9.]+)?$|^\[|^linux-vdso)"));
    for (const engine::Mapping &mapping : profile.mappings()) {
        QString name = QFileInfo(QString::fromStdString(profile.str(mapping.filename))).fileName();
        if (!name.isEmpty() && !library.match(name).hasMatch())
            return name;
    }
    return {};
}

void summarizeLoaded(ProfileSummary &summary, const std::shared_ptr<const engine::LoadedProfile> &loaded,
                     const std::atomic<bool> *cancel)
{
    const engine::Profile &profile = *loaded->profile;
    if (profile.timeNanos > 0)
        summary.recorded = QDateTime::fromMSecsSinceEpoch(profile.timeNanos / 1'000'000);
    summary.durationNs = profile.durationNanos;
    summary.program = mainProgram(profile);
    const int type = initialSampleType(profile);
    if (type < 0)
        return;
    summary.sampleType = QString::fromStdString(profile.str(profile.sampleTypes()[type].type));
    engine::AnalysisRequest request;
    request.loaded = loaded;
    request.sampleType = type;
    const std::shared_ptr<const engine::Analysis> analysis = engine::analyze(request, cancel);
    if (!analysis || !analysis->functions || analysis->functions->rows().empty())
        return;
    const engine::FunctionTable::Row &top = analysis->functions->rows().front();
    if (top.self <= 0 || analysis->functions->grandTotal() <= 0)
        return;
    const engine::Frame &topFrame = loaded->frames->frame(top.frame);
    summary.topFunction = shortFrameName(topFrame, QString::fromStdString(topFrame.name));
    summary.topShare = static_cast<double>(top.self) / static_cast<double>(analysis->functions->grandTotal());
}

} // namespace

ProfileSummary summarizeProfile(const QString &path, const std::atomic<bool> *cancel)
{
    ProfileSummary summary;
    summary.path = path;
    const QFileInfo info(path);
    summary.session = info.isDir();
    const FileStamp stamp = SummaryCache::stampOf(path);
    summary.modified = stamp.modified;
    summary.size = stamp.size;
    summary.recorded = info.lastModified();
    if (!summary.session) {
        auto format = engine::sniffFileFormat(path.toStdString());
        if (format && format.value() == engine::ProfileFormat::PerfData)
            return summary; // reading it runs `perf script` over the whole file
    }
    engine::PprofReadOptions options;
    options.cancel = cancel;
    const engine::LoadOutcome outcome = engine::loadProfile(path, options, engine::SessionTimes::NotNeeded);
    if (!outcome.loaded) {
        summary.error = outcome.cancelled ? QStringLiteral("cancelled") : outcome.error;
        return summary;
    }
    summarizeLoaded(summary, outcome.loaded, cancel);
    return summary;
}

ProfileSummaries::ProfileSummaries(QObject *parent, const QString &cacheFile)
    : QObject(parent),
      m_cache(std::make_shared<SummaryCache>(cacheFile.isEmpty() ? SummaryCache::defaultFile() : cacheFile))
{
}

ProfileSummaries::~ProfileSummaries() = default;

void ProfileSummaries::request(const QStringList &paths)
{
    m_queue = paths;
    m_job.cancel();
    next();
}

void ProfileSummaries::next()
{
    if (m_queue.isEmpty())
        return;
    const QString path = m_queue.takeFirst();
    m_job.run(
        [path, cache = m_cache](const std::atomic<bool> *cancel) {
            // Unchanged since it was read, in this run or an earlier one: the summary stands (a live session's
            // folder changes while it records).
            if (std::optional<ProfileSummary> known = cache->find(path, SummaryCache::stampOf(path)))
                return *known;
            ProfileSummary summary = summarizeProfile(path, cancel);
            if (summary.error != QStringLiteral("cancelled"))
                cache->store(summary);
            return summary;
        },
        [this](const ProfileSummary &summary) {
            if (summary.error != QStringLiteral("cancelled"))
                Q_EMIT summaryReady(summary);
            next();
        });
}

} // namespace emberline::ui
