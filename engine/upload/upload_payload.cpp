#include "engine/upload/upload_payload.h"

#include "engine/upload/code_provenance.h"
#include "engine/upload/compression.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <sys/utsname.h>

#include <cstdio>
#include <ctime>

namespace emberline::engine {
namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

QJsonObject infoObject(const PayloadContext &context)
{
    utsname u{};
    uname(&u);
    const QJsonObject platform{{QStringLiteral("hostname"), q(hostName())},
                               {QStringLiteral("kernel_name"), QString::fromLocal8Bit(u.sysname)},
                               {QStringLiteral("kernel_release"), QString::fromLocal8Bit(u.release)},
                               {QStringLiteral("kernel_version"), QString::fromLocal8Bit(u.version)}};
    const QJsonObject application{{QStringLiteral("service"), q(context.service)},
                                  {QStringLiteral("env"), q(context.env)},
                                  {QStringLiteral("version"), q(context.version)}};
    const QJsonObject profiler{{QStringLiteral("version"), QStringLiteral(EMBERLINE_VERSION)},
                               {QStringLiteral("name"), QStringLiteral("emberline")}};
    return QJsonObject{{QStringLiteral("platform"), platform},
                       {QStringLiteral("runtime"), QJsonObject{{QStringLiteral("engine"), QStringLiteral("native")}}},
                       {QStringLiteral("application"), application},
                       {QStringLiteral("profiler"), profiler}};
}

Result<UploadAttachment> attach(const std::string &name, std::string_view raw, UploadCodec codec)
{
    auto bytes = codec == UploadCodec::Zstd ? zstdCompress(raw, 1) : gzipCompress(raw, 6);
    if (!bytes)
        return bytes.error();
    return UploadAttachment{name, std::move(bytes).value(), raw.size(), codec == UploadCodec::Zstd ? "zstd" : "gzip"};
}

Result<UploadAttachment> pprofAttachment(const Flush &flush, UploadCodec codec)
{
    if (codec == UploadCodec::Gzip && isGzip(flush.pprofBytes)) {
        auto raw = gunzip(flush.pprofBytes);
        const uint64_t rawSize = raw ? raw->size() : 0;
        return UploadAttachment{"profile.pprof", flush.pprofBytes, rawSize, "gzip"};
    }
    if (!isGzip(flush.pprofBytes))
        return attach("profile.pprof", flush.pprofBytes, codec);
    auto raw = gunzip(flush.pprofBytes);
    if (!raw)
        return raw.error();
    return attach("profile.pprof", raw.value(), codec);
}

} // namespace

std::string rfc3339Utc(int64_t ns)
{
    const time_t seconds = static_cast<time_t>(ns / 1'000'000'000);
    const long fraction = static_cast<long>(ns % 1'000'000'000);
    tm t{};
    gmtime_r(&seconds, &t);
    char out[64];
    std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                  t.tm_hour, t.tm_min, t.tm_sec, fraction);
    return out;
}

uint64_t UploadPayload::bodyBytes() const
{
    uint64_t n = eventJson.size();
    for (const UploadAttachment &a : attachments)
        n += a.bytes.size();
    return n;
}

Result<UploadPayload> buildUploadPayload(const Flush &flush, const std::vector<Tag> &tags,
                                         const PayloadContext &context)
{
    if (!flush.profile || flush.pprofBytes.empty())
        return makeError(Error::Code::Invalid, "the flush has no profile to upload");
    UploadPayload payload;
    payload.tags = tags;

    CodeProvenanceOptions options;
    options.mainExecutable = context.mainExecutable;
    options.mainVersion = context.version;
    const std::string provenance = codeProvenanceJson(codeProvenanceEntries(*flush.profile, options));
    auto provenancePart = attach("code-provenance.json", provenance, context.codec);
    if (!provenancePart)
        return provenancePart.error();
    auto pprofPart = pprofAttachment(flush, context.codec);
    if (!pprofPart)
        return pprofPart.error();
    payload.attachments.push_back(std::move(provenancePart).value());
    payload.attachments.push_back(std::move(pprofPart).value());

    QJsonArray attachments;
    for (const UploadAttachment &a : payload.attachments)
        attachments.append(q(a.name));
    const QJsonObject internal{{QStringLiteral("emberline_version"), QStringLiteral(EMBERLINE_VERSION)},
                               {QStringLiteral("flush_sequence"), static_cast<qint64>(flush.sequence)},
                               {QStringLiteral("samples"), static_cast<qint64>(flush.samples)},
                               {QStringLiteral("lost"), static_cast<qint64>(flush.lost)},
                               {QStringLiteral("incomplete"), static_cast<qint64>(flush.incomplete)},
                               {QStringLiteral("final"), flush.final}};
    const QJsonObject event{{QStringLiteral("attachments"), attachments},
                            {QStringLiteral("tags_profiler"), q(joinTags(tags))},
                            {QStringLiteral("start"), q(rfc3339Utc(flush.startNs))},
                            {QStringLiteral("end"), q(rfc3339Utc(flush.endNs))},
                            {QStringLiteral("family"), QStringLiteral("native")},
                            {QStringLiteral("version"), QStringLiteral("4")},
                            {QStringLiteral("info"), infoObject(context)},
                            {QStringLiteral("internal"), internal}};
    payload.eventJson = QJsonDocument(event).toJson(QJsonDocument::Compact).toStdString();
    return payload;
}

} // namespace emberline::engine
