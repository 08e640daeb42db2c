#pragma once

// What a Datadog receiver would see, taken apart independently of the uploader's own code: the multipart body
// parsed by hand, attachments decompressed with libzstd and zlib directly, pprof decoded with the engine's
// reader. checkRequest() applies every check of the wire spec's section 6 and returns the failures in words.

#include "tests/engine/upload/loopback_server.h"

#include "engine/pprof/pprof_reader.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <zlib.h>
#include <zstd.h>

#include <optional>
#include <set>

namespace emberline::test {

struct Part {
    std::string name;
    std::string filename;
    std::string contentType;
    std::string data;
};

inline std::string dispositionParam(const std::string &disposition, const std::string &key)
{
    const std::string needle = key + "=\"";
    const size_t at = disposition.find("; " + needle);
    if (at == std::string::npos)
        return {};
    const size_t start = at + 2 + needle.size();
    return disposition.substr(start, disposition.find('"', start) - start);
}

// Splits a multipart/form-data body; empty when the body does not follow the boundary.
inline std::vector<Part> parseMultipart(const std::string &contentType, const std::string &body)
{
    const size_t b = contentType.find("boundary=");
    if (contentType.rfind("multipart/form-data", 0) != 0 || b == std::string::npos)
        return {};
    std::string boundary = contentType.substr(b + 9);
    if (!boundary.empty() && boundary.front() == '"')
        boundary = boundary.substr(1, boundary.size() - 2);
    const std::string delimiter = "--" + boundary;
    std::vector<Part> parts;
    size_t pos = body.find(delimiter);
    while (pos != std::string::npos) {
        pos += delimiter.size();
        if (body.compare(pos, 2, "--") == 0)
            break; // the closing delimiter
        pos += 2;  // CRLF
        const size_t headEnd = body.find("\r\n\r\n", pos);
        if (headEnd == std::string::npos)
            return {};
        const std::string head = body.substr(pos, headEnd - pos);
        const size_t next = body.find("\r\n" + delimiter, headEnd + 4);
        if (next == std::string::npos)
            return {};
        Part part;
        part.data = body.substr(headEnd + 4, next - headEnd - 4);
        size_t line = 0;
        while (line < head.size()) {
            size_t end = head.find("\r\n", line);
            if (end == std::string::npos)
                end = head.size();
            const std::string h = head.substr(line, end - line);
            std::string lower = h;
            std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
            if (lower.rfind("content-disposition:", 0) == 0) {
                part.name = dispositionParam(h, "name");
                part.filename = dispositionParam(h, "filename");
            } else if (lower.rfind("content-type:", 0) == 0) {
                part.contentType = h.substr(h.find_first_not_of(' ', 13));
            }
            line = end + 2;
        }
        parts.push_back(std::move(part));
        pos = next + 2;
    }
    return parts;
}

// Decompresses by magic bytes (zstd 28 B5 2F FD, gzip 1F 8B); nullopt for anything else or corrupt data.
inline std::optional<std::string> decompressAttachment(const std::string &data, std::string *codec = nullptr)
{
    const auto *u = reinterpret_cast<const unsigned char *>(data.data());
    if (data.size() >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f && u[3] == 0xfd) {
        if (codec)
            *codec = "zstd";
        ZSTD_DStream *ds = ZSTD_createDStream();
        ZSTD_initDStream(ds);
        std::string out;
        ZSTD_inBuffer in{data.data(), data.size(), 0};
        char buffer[65536];
        size_t rc = 1;
        while (in.pos < in.size && rc != 0) {
            ZSTD_outBuffer ob{buffer, sizeof buffer, 0};
            rc = ZSTD_decompressStream(ds, &ob, &in);
            if (ZSTD_isError(rc)) {
                ZSTD_freeDStream(ds);
                return std::nullopt;
            }
            out.append(buffer, ob.pos);
        }
        ZSTD_freeDStream(ds);
        return rc == 0 ? std::optional(out) : std::nullopt;
    }
    if (data.size() >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
        if (codec)
            *codec = "gzip";
        z_stream z{};
        inflateInit2(&z, 31);
        z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
        z.avail_in = static_cast<uInt>(data.size());
        std::string out;
        char buffer[65536];
        int rc = Z_OK;
        while (rc == Z_OK) {
            z.next_out = reinterpret_cast<Bytef *>(buffer);
            z.avail_out = sizeof buffer;
            rc = inflate(&z, Z_NO_FLUSH);
            out.append(buffer, sizeof buffer - z.avail_out);
        }
        inflateEnd(&z);
        return rc == Z_STREAM_END ? std::optional(out) : std::nullopt;
    }
    return std::nullopt;
}

// One request as the intake reads it.
struct Received {
    QJsonObject event;
    std::map<std::string, std::string> attachments; // decompressed, by name
    std::optional<engine::Profile> profile;
    QStringList tags; // tags_profiler, split
    QStringList failures;
    QString tag(const QString &key) const
    {
        for (const QString &t : tags) {
            if (t.startsWith(key + QLatin1Char(':')))
                return t.mid(key.size() + 1);
        }
        return {};
    }
};

inline bool isRfc3339Utc(const QString &s)
{
    return s.endsWith(QLatin1Char('Z')) && QDateTime::fromString(s, Qt::ISODateWithMs).isValid();
}

// Every check of the spec's section 6. apiKey: the key the test configured (may be empty); agentless: whether it
// may appear, and then only in the DD-API-KEY header.
inline Received checkRequest(const CapturedRequest &r, const std::string &apiKey = {}, bool agentless = false)
{
    Received out;
    auto fail = [&](const QString &why) { out.failures << why; };
    if (r.method != "POST")
        fail(QStringLiteral("method is %1, not POST").arg(QString::fromStdString(r.method)));
    if (r.header("dd-evp-origin").empty() || r.header("dd-evp-origin-version").empty())
        fail(QStringLiteral("DD-EVP-ORIGIN / DD-EVP-ORIGIN-VERSION missing"));
    if (r.header("user-agent").empty())
        fail(QStringLiteral("no User-Agent"));
    if (r.header("connection") != "close")
        fail(QStringLiteral("Connection is not close"));
    if (!apiKey.empty()) {
        const bool inHeader = r.header("dd-api-key") == apiKey;
        std::string withoutHeader = r.head + r.body;
        if (inHeader)
            withoutHeader.replace(withoutHeader.find(apiKey), apiKey.size(), "");
        if (withoutHeader.find(apiKey) != std::string::npos)
            fail(QStringLiteral("the API key appears outside the DD-API-KEY header"));
        if (inHeader != agentless)
            fail(agentless ? QStringLiteral("agentless request without DD-API-KEY")
                           : QStringLiteral("agent-mode request carries DD-API-KEY"));
    } else if (!r.header("dd-api-key").empty() && !agentless) {
        fail(QStringLiteral("agent-mode request carries DD-API-KEY"));
    }
    const std::vector<Part> parts = parseMultipart(r.header("content-type"), r.body);
    if (parts.empty()) {
        fail(QStringLiteral("the body is not multipart/form-data"));
        return out;
    }
    std::set<std::string> attachmentParts;
    for (const Part &p : parts) {
        if (p.name == "event") {
            if (p.filename != "event.json" || p.contentType != "application/json")
                fail(QStringLiteral("event part: filename %1, type %2")
                         .arg(QString::fromStdString(p.filename), QString::fromStdString(p.contentType)));
            out.event = QJsonDocument::fromJson(QByteArray::fromStdString(p.data)).object();
            continue;
        }
        if (p.name != p.filename)
            fail(QStringLiteral("part %1 has filename %2")
                     .arg(QString::fromStdString(p.name), QString::fromStdString(p.filename)));
        attachmentParts.insert(p.name);
        auto raw = decompressAttachment(p.data);
        if (!raw) {
            fail(QStringLiteral("%1 is neither zstd nor gzip, or corrupt").arg(QString::fromStdString(p.name)));
            continue;
        }
        out.attachments[p.name] = *raw;
    }
    const QJsonObject &e = out.event;
    if (e.value(QStringLiteral("version")).toString() != QLatin1String("4"))
        fail(QStringLiteral("event.json version is not \"4\""));
    if (e.value(QStringLiteral("family")).toString() != QLatin1String("native"))
        fail(QStringLiteral("family is not native"));
    std::set<std::string> listed;
    for (const QJsonValue &v : e.value(QStringLiteral("attachments")).toArray())
        listed.insert(v.toString().toStdString());
    if (listed != attachmentParts || listed.empty())
        fail(QStringLiteral("attachments in event.json do not name exactly the parts present"));
    const QString start = e.value(QStringLiteral("start")).toString();
    const QString end = e.value(QStringLiteral("end")).toString();
    if (!isRfc3339Utc(start) || !isRfc3339Utc(end) ||
        QDateTime::fromString(start, Qt::ISODateWithMs) >= QDateTime::fromString(end, Qt::ISODateWithMs))
        fail(QStringLiteral("start %1 / end %2 are not RFC 3339 UTC with start < end").arg(start, end));
    if (!e.value(QStringLiteral("info")).isObject() || !e.value(QStringLiteral("internal")).isObject())
        fail(QStringLiteral("info or internal is not an object"));
    out.tags = e.value(QStringLiteral("tags_profiler")).toString().split(QLatin1Char(','));
    for (const QString &t : out.tags) {
        if (t.isEmpty() || t.endsWith(QLatin1Char(':')))
            fail(QStringLiteral("empty tag in tags_profiler"));
    }
    if (out.attachments.count("profile.pprof")) {
        auto profile = engine::readPprofBytes(out.attachments["profile.pprof"], "profile.pprof");
        if (profile)
            out.profile = std::move(profile).value();
        else
            fail(QStringLiteral("profile.pprof does not decode: %1")
                     .arg(QString::fromStdString(profile.error().message)));
    } else {
        fail(QStringLiteral("no profile.pprof"));
    }
    if (out.attachments.count("code-provenance.json")) {
        const QJsonDocument cp =
            QJsonDocument::fromJson(QByteArray::fromStdString(out.attachments["code-provenance.json"]));
        if (!cp.object().value(QStringLiteral("v1")).isArray())
            fail(QStringLiteral("code-provenance.json has no v1 array"));
    }
    return out;
}

} // namespace emberline::test
