// `emberline report --disasm` on Emberline's own recording of tests/targets/hot_loop, whose time is spent in one
// tight loop by construction: nearly all of spin's samples must land on the loop's instructions (from the
// backward branch's target to the branch). The binary is then replaced on disk by another program, and the report
// must refuse it, naming the file and both build ids. Bad input gets clear errors.

#include "report_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::test;

namespace {

const QString kHotLoop = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/hot_loop");
const QString kOther = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split");

// The report without debuginfod or the system's debug directory, so that only the recorded path can answer.
Run disasm(const QStringList &args)
{
    qunsetenv("DEBUGINFOD_URLS");
    return run(kEmberline, QStringList{QStringLiteral("report")} + args +
                               QStringList{QStringLiteral("--debug-dir"), QStringLiteral("/nonexistent")});
}

struct Loop {
    qint64 first = -1; // the backward branch's target
    qint64 last = -1;  // the branch
};

// The innermost backward branch within the function: a jump whose target lies before it, inside the listing.
Loop findLoop(const QJsonArray &instructions)
{
    static const QRegularExpression jump(QStringLiteral("^j\\w+ 0x([0-9a-f]+)$"));
    const qint64 start =
        instructions.first().toObject().value(QStringLiteral("address")).toString().toLongLong(nullptr, 16);
    Loop loop;
    for (const auto &v : instructions) {
        const QJsonObject insn = v.toObject();
        const qint64 address = insn.value(QStringLiteral("address")).toString().toLongLong(nullptr, 16);
        const auto m = jump.match(insn.value(QStringLiteral("text")).toString());
        if (!m.hasMatch())
            continue;
        const qint64 target = m.captured(1).toLongLong(nullptr, 16);
        if (target >= start && target < address && (loop.first < 0 || address - target < loop.last - loop.first))
            loop = {target, address};
    }
    return loop;
}

QString buildIdOf(const QByteArray &readelf)
{
    static const QRegularExpression re(QStringLiteral("Build ID: ([0-9a-f]+)"));
    return re.match(QString::fromUtf8(readelf)).captured(1);
}

} // namespace

class TestReportDisasm : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, instruction costs are misplaced (wrong addresses, wrong file offsets, wrong instruction
    // boundaries), or a replaced binary is annotated with a recording that is not its own.
    void costLandsOnTheLoopAndAReplacedBinaryIsRefused()
    {
        QTemporaryDir dir;
        const QString binary = dir.filePath(QStringLiteral("hot_loop"));
        QVERIFY(QFile::copy(kHotLoop, binary));
        const Run rec = run(kEmberline, {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("499"),
                                         QStringLiteral("--output"), dir.filePath(QStringLiteral("rec")),
                                         QStringLiteral("--"), binary, QStringLiteral("3")});
        if (rec.exitCode != 0) {
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL(
                    qPrintable(QStringLiteral("emberline record failed under CI=true: ") + QString::fromUtf8(rec.err)));
            QSKIP(qPrintable(QStringLiteral("cannot profile here: ") + QString::fromUtf8(rec.err)));
        }
        const QString profile = dir.filePath(QStringLiteral("rec/profile.pprof"));
        const Run json =
            disasm({profile, QStringLiteral("--disasm"), QStringLiteral("^spin$"), QStringLiteral("--json"),
                    QStringLiteral("--sample-type"), QStringLiteral("cpu-samples")});
        QVERIFY2(json.exitCode == 0, json.err.constData());
        const QJsonArray functions =
            QJsonDocument::fromJson(json.out).object().value(QStringLiteral("functions")).toArray();
        QCOMPARE(functions.size(), 1);
        const QJsonObject fn = functions[0].toObject();
        QCOMPARE(fn.value(QStringLiteral("name")).toString(), QStringLiteral("spin"));
        QCOMPARE(fn.value(QStringLiteral("binary")).toString(), binary);
        const qint64 self = fn.value(QStringLiteral("self")).toInteger();
        QVERIFY2(self >= 300, qPrintable(QStringLiteral("only %1 samples in spin").arg(self)));
        const QJsonArray instructions = fn.value(QStringLiteral("instructions")).toArray();
        const Loop loop = findLoop(instructions);
        QVERIFY2(loop.first >= 0, "no backward branch in spin's listing");
        qint64 inLoop = 0, sum = 0;
        for (const auto &v : instructions) {
            const QJsonObject insn = v.toObject();
            const qint64 address = insn.value(QStringLiteral("address")).toString().toLongLong(nullptr, 16);
            const qint64 s = insn.value(QStringLiteral("self")).toInteger();
            sum += s;
            if (address >= loop.first && address <= loop.last)
                inLoop += s;
        }
        QCOMPARE(sum, self);
        QVERIFY2(inLoop * 100 >= self * 95, qPrintable(QStringLiteral("%1 of %2 samples in the loop %3..%4")
                                                           .arg(inLoop)
                                                           .arg(self)
                                                           .arg(loop.first, 0, 16)
                                                           .arg(loop.last, 0, 16)));

        // The text listing shows the loop's source line and the instructions.
        const Run text = disasm({profile, QStringLiteral("--disasm"), QStringLiteral("^spin$"),
                                 QStringLiteral("--source-root"), QStringLiteral(EMBERLINE_SOURCE_DIR)});
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY2(text.out.contains("ROUTINE ======================== spin in " + binary.toUtf8()),
                 text.out.constData());
        QVERIFY2(text.out.contains("// HOT_LOOP"), text.out.constData());

        // Replaced by another program: refused, with the file and both build ids.
        const Run readelfOld = run(QStringLiteral("readelf"), {QStringLiteral("-n"), binary});
        const Run readelfNew = run(QStringLiteral("readelf"), {QStringLiteral("-n"), kOther});
        const QString oldId = buildIdOf(readelfOld.out), newId = buildIdOf(readelfNew.out);
        QVERIFY(!oldId.isEmpty() && !newId.isEmpty() && oldId != newId);
        QVERIFY(QFile::remove(binary) && QFile::copy(kOther, binary));
        const Run refused = disasm({profile, QStringLiteral("--disasm"), QStringLiteral("^spin$")});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains(binary.toUtf8()) && refused.err.contains(oldId.toUtf8()) &&
                     refused.err.contains(newId.toUtf8()) && refused.err.contains("refused"),
                 refused.err.constData());
        QVERIFY(refused.out.isEmpty());
    }

    // If this fails, bad input crashes, prints nothing useful, or exits 0.
    void badInputIsAClearError()
    {
        QTemporaryDir dir;
        const QString folded = dir.filePath(QStringLiteral("stacks.folded"));
        QFile f(folded);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("main;spin 10\nmain 2\n");
        f.close();
        const Run noAddresses = disasm({folded, QStringLiteral("--disasm"), QStringLiteral("spin")});
        QCOMPARE(noAddresses.exitCode, 1);
        QVERIFY2(noAddresses.err.contains("no instruction addresses"), noAddresses.err.constData());

        const QString go = kData + QStringLiteral("/go-cpu.pprof");
        const Run badRegex = disasm({go, QStringLiteral("--disasm"), QStringLiteral("(unclosed")});
        QCOMPARE(badRegex.exitCode, 1);
        QVERIFY2(badRegex.err.contains("not a valid regular expression"), badRegex.err.constData());

        const Run noMatch = disasm({go, QStringLiteral("--disasm"), QStringLiteral("^no_function_is_named_so$")});
        QCOMPARE(noMatch.exitCode, 1);
        QVERIFY2(noMatch.err.contains("no function with an instruction address matches"), noMatch.err.constData());

        const Run missing =
            disasm({dir.filePath(QStringLiteral("missing.pprof")), QStringLiteral("--disasm"), QStringLiteral("x")});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains("missing.pprof"), missing.err.constData());

        const Run withBase =
            disasm({go, QStringLiteral("--disasm"), QStringLiteral("x"), QStringLiteral("--base"), go});
        QCOMPARE(withBase.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestReportDisasm)
#include "tst_report_disasm.moc"
