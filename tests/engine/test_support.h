#pragma once

// Helpers shared by the engine tests: the real test files and their manifest, gunzip, and a builder for small
// hand-made profiles whose call trees are known exactly.

#include "engine/model/profile.h"

#include <QByteArray>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <zlib.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace emberline::test {

inline QString pprofDir()
{
    return QStringLiteral(EMBERLINE_TEST_DATA "/pprof");
}

inline QString goldenDir()
{
    return QStringLiteral(EMBERLINE_TEST_DATA "/golden");
}

// The files written by other profilers (Go runtime/pprof, Datadog's Node profiler).
inline QStringList realFiles()
{
    return {QStringLiteral("go-cpu.pprof"), QStringLiteral("go-heap.pprof"), QStringLiteral("node-wall.pb.gz"),
            QStringLiteral("node-heap.pb.gz")};
}

inline std::string realPath(const QString &file)
{
    return (pprofDir() + QLatin1Char('/') + file).toStdString();
}

inline QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

// What an independent decoder reads from each real file (tests/data/pprof/MANIFEST.ndjson), by file name.
inline QJsonObject manifestEntry(const QString &file)
{
    const QByteArray all = readAll(pprofDir() + QStringLiteral("/MANIFEST.ndjson"));
    for (const QByteArray &line : all.split('\n')) {
        QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("file")).toString() == file)
            return o;
    }
    return {};
}

// Decompresses a gzip stream (zlib with gzip header detection); empty on error.
inline QByteArray gunzip(const QByteArray &in)
{
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return {};
    QByteArray out;
    char buf[1 << 15];
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef *>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, static_cast<qsizetype>(sizeof buf - z.avail_out));
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : QByteArray();
}

inline std::string_view view(const QByteArray &b)
{
    return {b.constData(), static_cast<size_t>(b.size())};
}

// Builds small profiles by hand through the public model API. Function and location ids are index + 1.
class ProfileBuilder {
public:
    // Sample types as (type, unit) pairs.
    explicit ProfileBuilder(std::initializer_list<std::pair<const char *, const char *>> types)
    {
        for (const auto &[type, unit] : types)
            m_p.sampleTypes().push_back({m_p.intern(type), m_p.intern(unit)});
    }

    uint32_t function(const std::string &name, const std::string &file = {}, int64_t startLine = 0)
    {
        const auto index = static_cast<uint32_t>(m_p.functions().size());
        m_p.functions().push_back(
            engine::Function{index + 1u, m_p.intern(name), m_p.intern(name), m_p.intern(file), startLine});
        return index;
    }

    // A function whose system name differs from its name (a writer's mark, such as the interpreter frames' one).
    uint32_t functionWithSystemName(const std::string &name, const std::string &systemName,
                                    const std::string &file = {})
    {
        const auto index = static_cast<uint32_t>(m_p.functions().size());
        m_p.functions().push_back(
            engine::Function{index + 1u, m_p.intern(name), m_p.intern(systemName), m_p.intern(file), 0});
        return index;
    }

    uint32_t mapping(const std::string &file, uint64_t start, uint64_t limit, uint64_t offset = 0)
    {
        const auto index = static_cast<uint32_t>(m_p.mappings().size());
        engine::Mapping m;
        m.id = index + 1u;
        m.start = start;
        m.limit = limit;
        m.offset = offset;
        m.filename = m_p.intern(file);
        m_p.mappings().push_back(m);
        return index;
    }

    // One location; `functions` are its lines, inlined callee first. Line numbers are 10, 20, ...
    uint32_t location(const std::vector<uint32_t> &functions, uint32_t mapping = engine::kNoIndex, uint64_t address = 0)
    {
        const auto index = static_cast<uint32_t>(m_p.locations().size());
        engine::Location loc;
        loc.id = index + 1u;
        loc.mappingIndex = mapping;
        loc.address = address;
        int64_t line = 10;
        for (uint32_t f : functions) {
            loc.lines.push_back(engine::Line{f, line, 0});
            line += 10;
        }
        m_p.locations().push_back(std::move(loc));
        return index;
    }

    void sample(const std::vector<uint32_t> &leafFirst, const std::vector<int64_t> &values,
                const std::vector<engine::Label> &labels = {})
    {
        m_p.addSample(leafFirst, values, labels);
    }

    engine::Label numLabel(const std::string &key, int64_t num) { return engine::Label{m_p.intern(key), 0, num, 0}; }
    engine::Label strLabel(const std::string &key, const std::string &value)
    {
        return engine::Label{m_p.intern(key), m_p.intern(value), 0, 0};
    }

    engine::Profile &profile() { return m_p; }
    engine::Profile take() { return std::move(m_p); }

private:
    engine::Profile m_p;
};

} // namespace emberline::test
