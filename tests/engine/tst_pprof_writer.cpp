// The pprof writer: every real file survives a write/read round trip unchanged in what the user sees, and what we
// write is read by `go tool pprof` without a warning and with the same totals.

#include "test_support.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"

#include <google/protobuf/stubs/logging.h>

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

QTEST_GUILESS_MAIN(TestPprofWriter)
#include "tst_pprof_writer.moc"
