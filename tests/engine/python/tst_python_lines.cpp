// The line-table decoders against the interpreters themselves: every installed CPython prints, for the code objects
// of a test module (loops, jumps of more than 255 lines, lines going backwards, one line of over 255 bytes of
// bytecode, empty lines, try/finally, generators, a coroutine), its raw table and the line of every instruction as
// its own API computes it; the decoder of its version must give the same line at every offset. A wrong line here
// would put every sample of a Python frame on the wrong source line.

#include "engine/python/python_lines.h"
#include "tests/engine/python/python_installs.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace emberline::engine;
using emberline::test::PythonInstall;

namespace {

LineTableKind kindOf(int minor)
{
    return minor <= 9 ? LineTableKind::Lnotab : minor == 10 ? LineTableKind::Pep626 : LineTableKind::Locations;
}

} // namespace

class TestPythonLines : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Hand-made tables: the rules each format states, without an interpreter.
    void lnotabRules()
    {
        // +6 bytes +1 line, +0 bytes +200 lines as two pairs (127 + 73), +4 bytes -3 lines.
        const uint8_t table[] = {6, 1, 0, 127, 0, 73, 4, 0xfd};
        QCOMPARE(lineFromLnotab(10, table, sizeof table, -1), 10);
        QCOMPARE(lineFromLnotab(10, table, sizeof table, 0), 10);
        QCOMPARE(lineFromLnotab(10, table, sizeof table, 6), 211);
        QCOMPARE(lineFromLnotab(10, table, sizeof table, 9), 211);
        QCOMPARE(lineFromLnotab(10, table, sizeof table, 10), 208);
        QCOMPARE(lineFromLnotab(10, table, sizeof table, 1000), 208);
    }

    void pep626Rules()
    {
        // [0,4) line 11, [4,4) +0 (empty, moves the line by +5), [4,8) no line, [8,10) line 16 - 1 = 15.
        const uint8_t table[] = {4, 1, 0, 5, 4, 0x80, 2, 0xff};
        QCOMPARE(lineFromPep626(10, table, sizeof table, 0), 11);
        QCOMPARE(lineFromPep626(10, table, sizeof table, 3), 11);
        QCOMPARE(lineFromPep626(10, table, sizeof table, 4), -1);
        QCOMPARE(lineFromPep626(10, table, sizeof table, 8), 15);
        QCOMPARE(lineFromPep626(10, table, sizeof table, 10), -1); // past the table
    }

    void locationRules()
    {
        const uint8_t table[] = {
            0x80 | (13 << 3) | 0, 2,                   // 1 unit, no columns, +1 line
            0x80 | (11 << 3) | 1, 4,    8,             // 2 units, one-line form +1
            0x80 | (15 << 3) | 0,                      // 1 unit, no location
            0x80 | (14 << 3) | 0, 0x41, 0x05, 0, 1, 2, // 1 unit, long form: -(0x41 | 5 << 6 = 321 >> 1 = 160) lines
            0x80 | (3 << 3) | 2,  7,                   // 3 units, short form: same line
        };
        QCOMPARE(lineFromLocations(100, table, sizeof table, 0), 101);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 2), 102);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 4), 102);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 6), -1);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 8), 102 - 160);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 14), 102 - 160);
        QCOMPARE(lineFromLocations(100, table, sizeof table, 16), -1);
    }

    // A table cut anywhere, or garbage, gives -1 or a line, never a read past its end (ASan watches the tier).
    void truncatedTablesStayInside()
    {
        const uint8_t full[] = {0x80 | (14 << 3), 0x41, 0x45, 0x05, 0x41, 0x01, 1, 2, 0x80 | (10 << 3), 1, 2};
        for (size_t n = 0; n <= sizeof full; ++n) {
            std::vector<uint8_t> cut(full, full + n);
            for (int64_t offset = 0; offset < 8; offset += 2) {
                lineFromLocations(1, cut.data(), cut.size(), offset);
                lineFromPep626(1, cut.data(), cut.size(), offset);
                lineFromLnotab(1, cut.data(), cut.size(), offset);
            }
        }
    }

    void interpreters_data()
    {
        QTest::addColumn<QString>("interpreter");
        QTest::addColumn<int>("minor");
        const std::vector<PythonInstall> installs = emberline::test::findPythonInstalls();
        for (int minor = 8; minor <= 13; ++minor) {
            bool found = false;
            for (const PythonInstall &p : installs) {
                if (p.minor != minor)
                    continue;
                found = true;
                QTest::newRow(qPrintable(p.label())) << p.interpreter << p.minor;
            }
            if (!found)
                qInfo("no CPython 3.%d is installed: its line table is not checked against an interpreter", minor);
        }
        if (installs.empty())
            QTest::newRow("none") << QString() << 0;
    }

    void interpreters()
    {
        QFETCH(QString, interpreter);
        QFETCH(int, minor);
        if (interpreter.isEmpty())
            QSKIP("no CPython 3.8-3.13 is installed (pyenv or /usr/bin)");
        QProcess p;
        p.start(interpreter, {QStringLiteral(EMBERLINE_PYTHON_TESTS "/line_tables.py")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
        QVERIFY(lines.size() >= 8);
        int checked = 0;
        int farJumps = 0;
        for (const QByteArray &line : lines) {
            const QJsonObject code = QJsonDocument::fromJson(line).object();
            const QByteArray table = QByteArray::fromHex(code.value(QStringLiteral("table")).toString().toLatin1());
            const int first = code.value(QStringLiteral("first")).toInt();
            const auto *bytes = reinterpret_cast<const uint8_t *>(table.constData());
            int previous = first;
            for (const auto &pair : code.value(QStringLiteral("lines")).toArray()) {
                const int64_t offset = pair.toArray().at(0).toInteger();
                const int expected = pair.toArray().at(1).toInt();
                const int got = lineForOffset(kindOf(minor), first, bytes, static_cast<size_t>(table.size()), offset);
                if (got != expected)
                    QFAIL(qPrintable(QStringLiteral("%1 offset %2: line %3, the interpreter says %4 (table %5)")
                                         .arg(code.value(QStringLiteral("name")).toString())
                                         .arg(offset)
                                         .arg(got)
                                         .arg(expected)
                                         .arg(QString::fromLatin1(table.toHex()))));
                if (expected > 0 && std::abs(expected - previous) > 255)
                    ++farJumps;
                if (expected > 0)
                    previous = expected;
                ++checked;
            }
        }
        QVERIFY2(checked > 500, "too few instructions checked: the test module did not compile as intended");
        QVERIFY2(farJumps >= 3, "the test module's jumps of more than 255 lines are missing");
    }
};

QTEST_GUILESS_MAIN(TestPythonLines)
#include "tst_python_lines.moc"
