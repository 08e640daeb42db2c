// The pprof reader on real files written by other profilers (Go's runtime/pprof, Datadog's Node profiler):
// each must decode to exactly what an independent decoder reads (MANIFEST.ndjson), with names, lines, inline
// frames and labels intact. Malformed input is tst_pprof_reader_errors.

#include "tests/engine/test_support.h"

#include "engine/model/frame_table.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"
#include "engine/pprof/profile.pb.h"

#include <QDir>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <set>

using namespace emberline;
using namespace emberline::engine;
namespace pb = perftools::profiles;

namespace {

std::string typeName(const Profile &p, const ValueType &vt)
{
    return p.str(vt.type) + "/" + p.str(vt.unit);
}

} // namespace

class TestPprofReader : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void realFilesMatchManifest_data();
    void realFilesMatchManifest();
    void goCpuNamesLinesAndInlining();
    void labels_data();
    void labels();
    void nodePseudoFrames();
    void rawProtobufReadsTheSame_data();
    void rawProtobufReadsTheSame();
};

void TestPprofReader::realFilesMatchManifest_data()
{
    QTest::addColumn<QString>("file");
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

// If this fails, the reader decodes a real profile differently from an independent decoder: wrong sample count,
// lost samples, misread values, a table dropped or duplicated, or scalar fields misplaced.
void TestPprofReader::realFilesMatchManifest()
{
    QFETCH(QString, file);
    const QJsonObject m = test::manifestEntry(file);
    QVERIFY2(!m.isEmpty(), "MANIFEST.ndjson has no entry for this file");
    auto r = readPprofFile(test::realPath(file));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    const Profile &p = r.value();

    QCOMPARE(qint64(p.sampleCount()), m.value(QStringLiteral("samples")).toInteger());
    const QJsonArray types = m.value(QStringLiteral("sample_types")).toArray();
    QCOMPARE(qsizetype(p.sampleTypes().size()), types.size());
    const std::vector<int64_t> totals = p.totals();
    const QJsonObject expectedTotals = m.value(QStringLiteral("totals")).toObject();
    for (qsizetype i = 0; i < types.size(); ++i) {
        const std::string name = typeName(p, p.sampleTypes()[size_t(i)]);
        QCOMPARE(QString::fromStdString(name), types[i].toString());
        QCOMPARE(qint64(totals[size_t(i)]), expectedTotals.value(types[i].toString()).toInteger());
    }
    QCOMPARE(qint64(p.locations().size()), m.value(QStringLiteral("locations")).toInteger());
    QCOMPARE(qint64(p.functions().size()), m.value(QStringLiteral("functions")).toInteger());
    QCOMPARE(qint64(p.mappings().size()), m.value(QStringLiteral("mappings")).toInteger());
    QCOMPARE(qint64(p.strings().size()), m.value(QStringLiteral("strings")).toInteger());
    QCOMPARE(QString::number(p.timeNanos), m.value(QStringLiteral("time_nanos")).toString());
    QCOMPARE(qint64(p.durationNanos), m.value(QStringLiteral("duration_nanos")).toInteger());
    QCOMPARE(qint64(p.period), m.value(QStringLiteral("period")).toInteger());
    QCOMPARE(QString::fromStdString(typeName(p, p.periodType)), m.value(QStringLiteral("period_type")).toString());
    QCOMPARE(QString::fromStdString(p.str(p.defaultSampleType)),
             m.value(QStringLiteral("default_sample_type")).toString());
    // No default_sample_type in any of them: pprof's rule shows the last type.
    QCOMPARE(p.defaultSampleTypeIndex(), int(p.sampleTypes().size()) - 1);

    std::set<QString> keys;
    size_t maxDepth = 0;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        const SampleView s = p.sample(i);
        maxDepth = std::max(maxDepth, s.locations.size());
        for (const Label &l : s.labels)
            keys.insert(QString::fromStdString(p.str(l.key)));
    }
    QStringList expectedKeys;
    for (const QJsonValue k : m.value(QStringLiteral("label_keys")).toArray())
        expectedKeys << k.toString();
    QCOMPARE(QStringList(keys.begin(), keys.end()), expectedKeys);
    QCOMPARE(qint64(maxDepth), m.value(QStringLiteral("max_stack_depth")).toInteger());
}

// If this fails, function names, source files or line numbers are lost or attached to the wrong location, or
// inlined frames (several Lines in one Location) are flattened: the flame graph would show wrong frames.
void TestPprofReader::goCpuNamesLinesAndInlining()
{
    auto r = readPprofFile(test::realPath(QStringLiteral("go-cpu.pprof")));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    bool sawMul = false;
    for (const Function &f : p.functions()) {
        if (p.str(f.name) == "main.(*Matrix).Mul") {
            sawMul = true;
            QVERIFY2(p.str(f.filename).ends_with(".go"), p.str(f.filename).c_str());
        }
    }
    QVERIFY(sawMul);
    for (const char *name : {"main.runCPU.func17", "main.genericWork.func1"}) {
        const bool found = std::any_of(p.functions().begin(), p.functions().end(),
                                       [&](const Function &f) { return p.str(f.name) == name; });
        QVERIFY2(found, name);
    }
    const bool generic = std::any_of(p.functions().begin(), p.functions().end(),
                                     [&](const Function &f) { return p.str(f.name).starts_with("main.reduce["); });
    QVERIFY2(generic, "main.reduce[...] missing");

    size_t inlined = 0;
    for (const Location &loc : p.locations()) {
        QVERIFY(!loc.lines.empty());
        QVERIFY(loc.mappingIndex < p.mappings().size());
        for (const Line &line : loc.lines) {
            QVERIFY(line.functionIndex < p.functions().size());
            QVERIFY(line.line > 0);
        }
        if (loc.lines.size() > 1)
            ++inlined;
    }
    QVERIFY2(inlined > 0, "no location with inlined frames");
    // The frame table keeps each inlined frame: some location maps to several frames.
    const FrameTable frames(p);
    size_t multi = 0;
    for (uint32_t i = 0; i < p.locations().size(); ++i)
        multi += frames.locationFrames(i).size() > 1;
    QCOMPARE(multi, inlined);
}

void TestPprofReader::labels_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("key");
    QTest::addColumn<bool>("numeric");
    QTest::addColumn<double>("minShare"); // fraction of samples that carry the key
    QTest::addColumn<double>("maxShare");
    QTest::newRow("go-cpu worker") << QStringLiteral("go-cpu.pprof") << QStringLiteral("worker") << false << 0.2 << 0.8;
    QTest::newRow("go-cpu tenant") << QStringLiteral("go-cpu.pprof") << QStringLiteral("tenant") << false << 0.2 << 0.8;
    QTest::newRow("go-heap bytes") << QStringLiteral("go-heap.pprof") << QStringLiteral("bytes") << true << 0.99 << 1.0;
    QTest::newRow("node-wall slice_no") << QStringLiteral("node-wall.pb.gz") << QStringLiteral("slice_no") << true
                                        << 0.01 << 1.0;
    QTest::newRow("node-wall job") << QStringLiteral("node-wall.pb.gz") << QStringLiteral("job") << false << 0.01
                                   << 1.0;
}

// If this fails, labels are dropped, attached to the wrong sample, or string and numeric labels are confused:
// the thread filter and the timeline would read garbage.
void TestPprofReader::labels()
{
    QFETCH(QString, file);
    QFETCH(QString, key);
    QFETCH(bool, numeric);
    QFETCH(double, minShare);
    QFETCH(double, maxShare);
    auto r = readPprofFile(test::realPath(file));
    QVERIFY(r.ok());
    const Profile &p = r.value();
    const StringId keyId = p.findString(key.toStdString());
    QVERIFY(keyId != kNoIndex);
    size_t carrying = 0;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        int seen = 0;
        for (const Label &l : p.sampleLabels(i)) {
            if (l.key != keyId)
                continue;
            ++seen;
            if (numeric) {
                QCOMPARE(l.str, StringId(0));
            } else {
                QVERIFY(l.str != 0);
                QVERIFY(!p.str(l.str).empty());
            }
        }
        QVERIFY(seen <= 1);
        carrying += seen;
    }
    const double share = double(carrying) / double(p.sampleCount());
    QVERIFY2(share >= minShare && share <= maxShare, qPrintable(QString::number(share)));
}

// If this fails, Node's pseudo-frames and anonymous functions lose their names (they have no mapping and
// address 0, so a reader that insists on symbols would drop them).
void TestPprofReader::nodePseudoFrames()
{
    auto r = readPprofFile(test::realPath(QStringLiteral("node-wall.pb.gz")));
    QVERIFY(r.ok());
    const FrameTable frames(r.value());
    for (const char *name : {"(idle)", "Garbage Collection", "(anonymous:L#46:C#10)"})
        QVERIFY2(!frames.findByName(name).empty(), name);
    auto heap = readPprofFile(test::realPath(QStringLiteral("node-heap.pb.gz")));
    QVERIFY(heap.ok());
    const FrameTable heapFrames(heap.value());
    for (const char *name : {"(external)", "(anonymous)"})
        QVERIFY2(!heapFrames.findByName(name).empty(), name);
}

void TestPprofReader::rawProtobufReadsTheSame_data()
{
    realFilesMatchManifest_data();
}

// If this fails, the reader only handles gzip (the format is sniffed, not taken from the extension) or decodes
// raw protobuf differently.
void TestPprofReader::rawProtobufReadsTheSame()
{
    QFETCH(QString, file);
    const QByteArray gz = test::readAll(test::pprofDir() + QLatin1Char('/') + file);
    const QByteArray raw = test::gunzip(gz);
    QVERIFY(!raw.isEmpty());
    QVERIFY(raw.size() > gz.size());
    auto a = readPprofBytes(test::view(gz), file.toStdString());
    auto b = readPprofBytes(test::view(raw), file.toStdString());
    QVERIFY(a.ok());
    QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
    QCOMPARE(b->sampleCount(), a->sampleCount());
    QCOMPARE(b->totals(), a->totals());
    QCOMPARE(b->strings(), a->strings());
    QCOMPARE(b->locations().size(), a->locations().size());
    for (size_t i = 0; i < a->sampleCount(); ++i) {
        const auto sa = a->sample(i);
        const auto sb = b->sample(i);
        QVERIFY(std::equal(sa.locations.begin(), sa.locations.end(), sb.locations.begin(), sb.locations.end()));
    }
    // Raw from a file on disk, too (the file path sniffs the magic separately from the in-memory path).
    QTemporaryDir dir;
    QFile out(dir.filePath(QStringLiteral("raw.pb")));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(raw);
    out.close();
    auto c = readPprofFile(out.fileName().toStdString());
    QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
    QCOMPARE(c->totals(), a->totals());
}

QTEST_GUILESS_MAIN(TestPprofReader)
#include "tst_pprof_reader.moc"
