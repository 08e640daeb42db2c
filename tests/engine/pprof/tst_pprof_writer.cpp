// The pprof writer: every real file survives a write/read round trip unchanged in what the user sees, and what we
// write is read by `go tool pprof` without a warning and with the same totals.

#include "tests/engine/test_support.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"

#include <google/protobuf/stubs/logging.h>

#include <map>

#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

// Everything the user can see of a sample, spelled out in strings: frames with file:line, values, labels.
std::string describeSample(const Profile &p, size_t i)
{
    const SampleView s = p.sample(i);
    std::string out;
    for (uint32_t l : s.locations) {
        const Location &loc = p.locations()[l];
        out += "[" + std::to_string(loc.address);
        if (loc.mappingIndex != kNoIndex)
            out += "@" + p.str(p.mappings()[loc.mappingIndex].filename);
        for (const Line &line : loc.lines) {
            const Function &f = p.functions()[line.functionIndex];
            out += " " + p.str(f.name) + "|" + p.str(f.systemName) + "|" + p.str(f.filename) + ":" +
                   std::to_string(line.line) + "/" + std::to_string(f.startLine);
        }
        out += "]";
    }
    out += " =";
    for (int64_t v : s.values)
        out += " " + std::to_string(v);
    for (const Label &l : s.labels)
        out += " {" + p.str(l.key) + "=" + p.str(l.str) + "/" + std::to_string(l.num) + p.str(l.numUnit) + "}";
    return out;
}

std::vector<std::string> typeNames(const Profile &p)
{
    std::vector<std::string> names;
    for (const ValueType &vt : p.sampleTypes())
        names.push_back(p.str(vt.type) + "/" + p.str(vt.unit));
    return names;
}

// Each distinct stack with labels (as describeSample spells them, values left out) and its summed values.
std::map<std::string, std::vector<int64_t>> valuesByStack(const Profile &p)
{
    std::map<std::string, std::vector<int64_t>> out;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        std::string key = describeSample(p, i);
        const size_t values = key.find(" =");
        const size_t labels = key.find(" {", values);
        key = key.substr(0, values) + (labels == std::string::npos ? "" : key.substr(labels));
        auto &sum = out[key];
        const auto v = p.sampleValues(i);
        sum.resize(v.size());
        for (size_t t = 0; t < v.size(); ++t)
            sum[t] += v[t];
    }
    return out;
}

QString goBinary()
{
    return QStandardPaths::findExecutable(QStringLiteral("go"));
}

} // namespace

// What `go tool pprof -raw` reports of a file: sample type names, the sum of each, and its sample count.
struct RawSummary {
    bool ok = false;
    QByteArray error;
    std::vector<std::string> typeNames;
    std::vector<int64_t> sums;
    size_t samples = 0;
};

class TestPprofWriter : public QObject {
    Q_OBJECT

    static RawSummary goRaw(const QString &path);

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void readableByGoToolPprof_data();
    void readableByGoToolPprof();
    void writeFileErrors();
    void nonUtf8Strings();
    void streamOfProfiles_data();
    void streamOfProfiles();
    void streamDropsLabelsAndAddsUpWithinAProfile();
    void streamSkipsSnapshotColumns();
    void streamErrors();
};

void TestPprofWriter::roundTrip_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("compress");
    for (const QString &f : test::realFiles()) {
        QTest::newRow(qPrintable(f + QStringLiteral(" gzip"))) << f << true;
        QTest::newRow(qPrintable(f + QStringLiteral(" raw"))) << f << false;
    }
}

// If this fails, writing a profile loses or alters something the user sees (a frame, a line number, a label,
// a value, a sample type, the time span): a session saved to disk or uploaded would differ from what was shown.
void TestPprofWriter::roundTrip()
{
    QFETCH(QString, file);
    QFETCH(bool, compress);
    auto original = readPprofFile(test::realPath(file));
    QVERIFY(original.ok());
    const Profile &a = original.value();
    const std::string bytes = writePprof(a, compress);
    QCOMPARE(bytes.size() >= 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b', compress);
    auto copy = readPprofBytes(bytes, "copy.pprof");
    QVERIFY2(copy.ok(), copy.ok() ? "" : copy.error().message.c_str());
    const Profile &b = copy.value();

    QCOMPARE(b.sampleCount(), a.sampleCount());
    QCOMPARE(typeNames(b), typeNames(a));
    QCOMPARE(b.totals(), a.totals());
    QCOMPARE(b.timeNanos, a.timeNanos);
    QCOMPARE(b.durationNanos, a.durationNanos);
    QCOMPARE(b.period, a.period);
    QCOMPARE(b.str(b.periodType.type), a.str(a.periodType.type));
    QCOMPARE(b.str(b.periodType.unit), a.str(a.periodType.unit));
    QCOMPARE(b.defaultSampleTypeIndex(), a.defaultSampleTypeIndex());
    QCOMPARE(b.locations().size(), a.locations().size());
    QCOMPARE(b.functions().size(), a.functions().size());
    QCOMPARE(b.mappings().size(), a.mappings().size());
    QCOMPARE(b.comments().size(), a.comments().size());
    for (size_t i = 0; i < a.comments().size(); ++i)
        QCOMPARE(b.str(b.comments()[i]), a.str(a.comments()[i]));
    for (size_t i = 0; i < a.mappings().size(); ++i) {
        const Mapping &ma = a.mappings()[i];
        const Mapping &mb = b.mappings()[i];
        QCOMPARE(mb.start, ma.start);
        QCOMPARE(mb.limit, ma.limit);
        QCOMPARE(mb.offset, ma.offset);
        QCOMPARE(b.str(mb.filename), a.str(ma.filename));
        QCOMPARE(b.str(mb.buildId), a.str(ma.buildId));
        QCOMPARE(mb.hasFunctions, ma.hasFunctions);
        QCOMPARE(mb.hasInlineFrames, ma.hasInlineFrames);
    }
    for (size_t i = 0; i < a.sampleCount(); ++i) {
        const std::string da = describeSample(a, i);
        const std::string db = describeSample(b, i);
        if (da != db)
            QFAIL(qPrintable(QStringLiteral("sample %1 differs:\n  %2\n  %3")
                                 .arg(i)
                                 .arg(QString::fromStdString(da), QString::fromStdString(db))));
    }
}

void TestPprofWriter::readableByGoToolPprof_data()
{
    QTest::addColumn<QString>("file");
    for (const QString &f : test::realFiles())
        QTest::newRow(qPrintable(f)) << f;
}

// If this fails, `go tool pprof` (and so Datadog and every pprof tool) cannot read what Emberline writes, warns
// about it, or sums it to different totals.
void TestPprofWriter::readableByGoToolPprof()
{
    QFETCH(QString, file);
    if (goBinary().isEmpty()) {
        if (qEnvironmentVariable("CI") == QLatin1String("true"))
            QFAIL("go is not installed, and CI=true requires the go tool pprof cross-check");
        QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
    }
    auto original = readPprofFile(test::realPath(file));
    QVERIFY(original.ok());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("written.pprof"));
    const Status st = writePprofFile(original.value(), path.toStdString());
    QVERIFY(st.ok());

    const RawSummary ours = goRaw(path);
    QVERIFY2(ours.ok, ours.error.constData());
    QVERIFY2(ours.error.trimmed().isEmpty(), ours.error.constData()); // no warning of any kind
    const RawSummary theirs = goRaw(QString::fromStdString(test::realPath(file)));
    QVERIFY(theirs.ok);
    QCOMPARE(ours.typeNames, typeNames(original.value()));
    QCOMPARE(ours.sums, original->totals());
    // pprof -raw prints identical samples once; ours must collapse to the same number as the original.
    QCOMPARE(ours.samples, theirs.samples);
}

RawSummary TestPprofWriter::goRaw(const QString &path)
{
    RawSummary summary;
    QProcess go;
    go.start(goBinary(), {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-raw"),
                          QStringLiteral("-symbolize=none"), path});
    if (!go.waitForFinished(120000))
        return summary;
    const QByteArray out = go.readAllStandardOutput();
    summary.error = go.readAllStandardError();
    summary.ok = go.exitStatus() == QProcess::NormalExit && go.exitCode() == 0;

    // -raw prints "Samples:", a line of type names, then "v1 v2 ...: loc ids" lines (label lines indented).
    const QList<QByteArray> lines = out.split('\n');
    const qsizetype i = lines.indexOf("Samples:");
    if (i < 0 || i + 1 >= lines.size()) {
        summary.ok = false;
        return summary;
    }
    for (const QByteArray &name : lines[i + 1].simplified().split(' '))
        summary.typeNames.push_back(name.toStdString());
    summary.sums.assign(summary.typeNames.size(), 0);
    for (qsizetype k = i + 2; k < lines.size(); ++k) {
        const QByteArray &line = lines[k];
        const qsizetype colon = line.indexOf(':');
        if (line.isEmpty() || !line.startsWith(' ') || colon < 0)
            break;
        const QByteArray head = line.left(colon).simplified();
        if (head.contains('[') || head.isEmpty())
            continue; // a label line
        const QList<QByteArray> values = head.split(' ');
        if (values.size() != qsizetype(summary.sums.size()))
            continue;
        std::vector<int64_t> parsed;
        for (const QByteArray &v : values) {
            bool ok = false;
            parsed.push_back(v.toLongLong(&ok));
            if (!ok)
                break;
        }
        if (parsed.size() != summary.sums.size())
            continue;
        for (size_t t = 0; t < parsed.size(); ++t)
            summary.sums[t] += parsed[t];
        ++summary.samples;
    }
    return summary;
}

// If this fails, a write to an impossible place reports success or says nothing useful.
void TestPprofWriter::writeFileErrors()
{
    auto original = readPprofFile(test::realPath(QStringLiteral("go-heap.pprof")));
    QVERIFY(original.ok());
    const std::string path = "/nonexistent-dir/x/profile.pprof";
    const Status st = writePprofFile(original.value(), path);
    QVERIFY(!st.ok());
    QCOMPARE(st.error().code, Error::Code::Io);
    QVERIFY(st.error().message.starts_with(path + ":"));
}

namespace {
int s_protobufLogs = 0;
void countProtobufLog(google::protobuf::LogLevel, const char *, int, const std::string &)
{
    ++s_protobufLogs;
}
} // namespace

// If this fails, a profile whose names or paths are not UTF-8 (common in native binaries) makes protobuf log an
// error for every such string on stderr, or its bytes change on the way through the file.
void TestPprofWriter::nonUtf8Strings()
{
    test::ProfileBuilder b({{"samples", "count"}});
    const std::string latin1 = "caf\xe9::\xff\xfe";
    b.sample({b.location({b.function(latin1, "/src/\xe9t\xe9.c")})}, {3});
    const Profile p = b.take();
    s_protobufLogs = 0;
    google::protobuf::LogHandler *previous = google::protobuf::SetLogHandler(&countProtobufLog);
    const std::string bytes = writePprof(p);
    google::protobuf::SetLogHandler(previous);
    QCOMPARE(s_protobufLogs, 0);
    auto r = readPprofBytes(bytes, "latin1.pprof");
    QVERIFY(r.ok());
    QCOMPARE(r->str(r->functions()[0].name), latin1);
    QCOMPARE(r->str(r->functions()[0].filename), std::string("/src/\xe9t\xe9.c"));
}

void TestPprofWriter::streamOfProfiles_data()
{
    readableByGoToolPprof_data();
}

// If this fails, a session's profile.pprof (written a flush at a time) loses, alters or double-counts what its
// flushes held, or other pprof readers (go tool pprof) cannot read it.
void TestPprofWriter::streamOfProfiles()
{
    QFETCH(QString, file);
    auto original = readPprofFile(test::realPath(file));
    QVERIFY(original.ok());
    const Profile &a = original.value();
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("session.pprof")).toStdString();
    {
        PprofStreamWriter writer(path, {});
        for (int i = 0; i < 3; ++i) {
            const Status st = writer.add(a);
            QVERIFY2(st.ok(), st.ok() ? "" : st.error().message.c_str());
        }
        QVERIFY(!QFile::exists(QString::fromStdString(path))); // only once finished
        auto written = writer.finish();
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().message.c_str());
        QCOMPARE(written.value(), path);
    }
    QVERIFY(!QFile::exists(QString::fromStdString(path + ".tmp")));
    auto back = readPprofFile(path);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
    const Profile &b = back.value();
    QCOMPARE(typeNames(b), typeNames(a));
    std::vector<int64_t> thrice = a.totals();
    for (int64_t &v : thrice)
        v *= 3;
    QCOMPARE(b.totals(), thrice);
    // The same tables (nothing repeated per added profile), and every stack with its labels thrice its values.
    // (identical entries of the original's tables become one)
    QVERIFY(b.locations().size() <= a.locations().size());
    QVERIFY(b.functions().size() <= a.functions().size());
    QVERIFY(b.mappings().size() <= a.mappings().size());
    QCOMPARE(b.timeNanos, a.timeNanos);
    QCOMPARE(b.durationNanos, a.durationNanos);
    QCOMPARE(b.period, a.period);
    auto expected = valuesByStack(a);
    for (auto &[stack, values] : expected) {
        for (int64_t &v : values)
            v *= 3;
    }
    QVERIFY(valuesByStack(b) == expected);

    if (goBinary().isEmpty()) {
        if (qEnvironmentVariable("CI") == QLatin1String("true"))
            QFAIL("go is not installed, and CI=true requires the go tool pprof cross-check");
        QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
    }
    const RawSummary theirs = goRaw(QString::fromStdString(path));
    QVERIFY2(theirs.ok, theirs.error.constData());
    QVERIFY2(theirs.error.trimmed().isEmpty(), theirs.error.constData());
    QCOMPARE(theirs.sums, thrice);
}

// If this fails, the session's profile keeps per-sample timestamps (one sample per sample taken) or adds up
// samples of different threads, stacks or profiles wrongly.
void TestPprofWriter::streamDropsLabelsAndAddsUpWithinAProfile()
{
    test::ProfileBuilder b({{"cpu-samples", "count"}, {"cpu-time", "nanoseconds"}});
    const uint32_t hot = b.location({b.function("hot")});
    const uint32_t main = b.location({b.function("main")});
    for (int i = 0; i < 5; ++i)
        b.sample({hot, main}, {1, 10}, {b.numLabel("thread id", 7), b.numLabel("end_timestamp_ns", 100 + i)});
    b.sample({hot, main}, {1, 10}, {b.numLabel("thread id", 8), b.numLabel("end_timestamp_ns", 200)});
    b.sample({main}, {1, 10}, {b.numLabel("thread id", 7), b.numLabel("end_timestamp_ns", 300)});
    const Profile p = b.take();

    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("s.pprof")).toStdString();
    PprofStreamWriter writer(path, {"end_timestamp_ns"});
    QVERIFY(writer.add(p).ok());
    QCOMPARE(writer.samplesWritten(), size_t(3));
    QVERIFY(writer.add(p).ok());
    QCOMPARE(writer.samplesWritten(), size_t(6));
    QVERIFY(writer.finish().ok());
    auto back = readPprofFile(path);
    QVERIFY(back.ok());
    QCOMPARE(back->sampleCount(), size_t(6));
    const auto byStack = valuesByStack(back.value());
    QCOMPARE(byStack.size(), size_t(3));
    QCOMPARE(byStack.at("[0 hot|hot|:10/0][0 main|main|:10/0] {thread id=/7}"), (std::vector<int64_t>{10, 100}));
    QCOMPARE(byStack.at("[0 hot|hot|:10/0][0 main|main|:10/0] {thread id=/8}"), (std::vector<int64_t>{2, 20}));
    QCOMPARE(byStack.at("[0 main|main|:10/0] {thread id=/7}"), (std::vector<int64_t>{2, 20}));
}

// If this fails, a memory session's profile.pprof sums each flush's in-use snapshot (live memory counted once per
// flush it stayed live in) instead of holding only what was added without the skipped columns.
void TestPprofWriter::streamSkipsSnapshotColumns()
{
    test::ProfileBuilder b({{"alloc-space", "bytes"}, {"inuse-space", "bytes"}});
    const uint32_t site = b.location({b.function("site")});
    const uint32_t other = b.location({b.function("other")});
    b.sample({site}, {100, 1000}, {b.numLabel("thread id", 7)});
    b.sample({other}, {0, 500}, {b.numLabel("thread id", 7)}); // in use only: left out when the column is skipped
    const Profile flush = b.take();
    test::ProfileBuilder l({{"alloc-space", "bytes"}, {"inuse-space", "bytes"}});
    const Profile leaks = [&] {
        const uint32_t s = l.location({l.function("site")});
        l.sample({s}, {0, 300}, {l.numLabel("thread id", 7)});
        return l.take();
    }();
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("s.pprof")).toStdString();
    PprofStreamWriter writer(path, {});
    const size_t skip[1] = {1};
    QVERIFY(writer.add(flush, nullptr, skip).ok());
    QVERIFY(writer.add(flush, nullptr, skip).ok());
    QVERIFY(writer.add(leaks).ok());
    QVERIFY(writer.finish().ok());
    auto back = readPprofFile(path);
    QVERIFY(back.ok());
    QCOMPARE(back->totals(), (std::vector<int64_t>{200, 300}));
    const auto byStack = valuesByStack(back.value());
    QCOMPARE(byStack.size(), size_t(1)); // the site alone: "other" held in-use values only
}

// If this fails, a session whose output cannot be written says nothing useful, leaves a half file behind, or
// takes profiles of another kind into one file.
void TestPprofWriter::streamErrors()
{
    auto cpu = readPprofFile(test::realPath(QStringLiteral("go-cpu.pprof")));
    auto heap = readPprofFile(test::realPath(QStringLiteral("go-heap.pprof")));
    QVERIFY(cpu.ok() && heap.ok());
    {
        const std::string path = "/nonexistent-dir/x/profile.pprof";
        PprofStreamWriter writer(path, {});
        const Status st = writer.add(cpu.value());
        QVERIFY(!st.ok());
        QCOMPARE(st.error().code, Error::Code::Io);
        QVERIFY2(st.error().message.starts_with(path + ": "), st.error().message.c_str());
        QVERIFY(!writer.add(cpu.value()).ok()); // stays refused
        QVERIFY(!writer.finish().ok());
    }
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("p.pprof"));
    {
        PprofStreamWriter writer(path.toStdString(), {});
        QVERIFY(writer.add(cpu.value()).ok());
        const Status st = writer.add(heap.value());
        QVERIFY(!st.ok());
        QVERIFY(QString::fromStdString(st.error().message).contains(QLatin1String("different sample types")));
        QVERIFY(QFile::exists(path + QStringLiteral(".tmp")));
    } // destroyed unfinished
    QVERIFY(!QFile::exists(path + QStringLiteral(".tmp")));
    QVERIFY(!QFile::exists(path));
    {
        PprofStreamWriter writer(path.toStdString(), {});
        auto nothing = writer.finish();
        QVERIFY(nothing.ok());
        QCOMPARE(nothing.value(), std::string());
        QVERIFY(!QFile::exists(path));
    }
}

QTEST_GUILESS_MAIN(TestPprofWriter)
#include "tst_pprof_writer.moc"
