// `emberline report --list` on Emberline's own recording: tests/targets/line_split spends twice as long on one
// source line of two_lines as on another, by construction; recorded by `emberline record`, the two lines' self
// costs must hold that split, and the source shown must be the target's own file.

#include "report_test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::test;

namespace {

// The number of the line of `path` that holds `marker`, 0 when none does.
qint64 markedLine(const QString &path, const QByteArray &marker)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    qint64 n = 0;
    while (!f.atEnd()) {
        ++n;
        if (f.readLine().contains(marker))
            return n;
    }
    return 0;
}

} // namespace

class TestReportListRecorded : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, the per-line costs of a recording do not hold the target's 2:1 split between its two lines:
    // samples land on the wrong lines (symbolization) or are summed wrongly per line.
    void lineCostsHoldTheSplit()
    {
        QTemporaryDir dir;
        const Run rec =
            run(kEmberline, {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("499"),
                             QStringLiteral("--output"), dir.path(), QStringLiteral("--"),
                             QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/line_split"), QStringLiteral("3")});
        if (rec.exitCode != 0) {
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL(
                    qPrintable(QStringLiteral("emberline record failed under CI=true: ") + QString::fromUtf8(rec.err)));
            QSKIP(qPrintable(QStringLiteral("cannot profile here: ") + QString::fromUtf8(rec.err)));
        }
        const QString profile = dir.filePath(QStringLiteral("profile.pprof"));
        const Run list =
            run(kEmberline, {QStringLiteral("report"), profile, QStringLiteral("--list"), QStringLiteral("^two_lines$"),
                             QStringLiteral("--json"), QStringLiteral("--sample-type"), QStringLiteral("cpu-samples")});
        QVERIFY2(list.exitCode == 0, list.err.constData());
        const QJsonArray functions =
            QJsonDocument::fromJson(list.out).object().value(QStringLiteral("functions")).toArray();
        QCOMPARE(functions.size(), 1);
        const QJsonObject fn = functions[0].toObject();
        // The symbolizer records the compiler's own name for the file, relative to the build folder here.
        const QString recorded = fn.value(QStringLiteral("file")).toString();
        QVERIFY2(recorded.endsWith(QLatin1String("tests/targets/line_split.c")), qPrintable(recorded));
        const QString source = QDir(QStringLiteral(EMBERLINE_BINARY_DIR)).filePath(recorded);
        const qint64 twoThirds = markedLine(source, "// LINE_TWO_THIRDS");
        const qint64 oneThird = markedLine(source, "// LINE_ONE_THIRD");
        QVERIFY(twoThirds > 0 && oneThird > 0);
        qint64 a = 0, b = 0, other = 0;
        for (const auto &v : fn.value(QStringLiteral("lines")).toArray()) {
            const QJsonObject l = v.toObject();
            const qint64 line = l.value(QStringLiteral("line")).toInteger();
            const qint64 self = l.value(QStringLiteral("self")).toInteger();
            (line == twoThirds ? a : line == oneThird ? b : other) += self;
        }
        const qint64 self = fn.value(QStringLiteral("self")).toInteger();
        QVERIFY2(self >= 300, qPrintable(QStringLiteral("only %1 samples").arg(self)));
        QCOMPARE(a + b + other, self);
        QVERIFY2(other * 20 < self, qPrintable(QStringLiteral("%1 of %2 samples on other lines").arg(other).arg(self)));
        const double ratio = double(a) / double(b);
        QVERIFY2(ratio > 1.6 && ratio < 2.5,
                 qPrintable(QStringLiteral("split %1 : %2 (ratio %3)").arg(a).arg(b).arg(ratio)));

        // The text listing shows the target's own code on the hot line.
        const Run text =
            run(kEmberline, {QStringLiteral("report"), profile, QStringLiteral("--list"), QStringLiteral("^two_lines$"),
                             QStringLiteral("--source-root"), QStringLiteral(EMBERLINE_BINARY_DIR)});
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY2(text.out.contains(QStringLiteral("%1:    for (uint64_t i = 0; i < 2 * n;").arg(twoThirds).toUtf8()),
                 text.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestReportListRecorded)
#include "tst_report_list_recorded.moc"
