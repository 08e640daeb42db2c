// The perf map reader (PerfMap) on files as JIT compilers write them, and as they must not break it: lines cut
// while being written, garbage, overlapping blobs, a file rewritten by a new process, a file over the limit.
// If this fails, JIT frames get wrong names, or a hostile /tmp/perf-PID.map crashes or stalls the exporter.

#include "engine/symbols/perf_map.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <string>

using namespace emberline::engine;

namespace {

void write(const std::string &path, const std::string &text, const char *mode = "w")
{
    FILE *f = std::fopen(path.c_str(), mode);
    QVERIFY(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
}

} // namespace

class TestPerfMap : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(m_dir.isValid()); }

    // node's and LuaJIT's lines (with and without 0x, names with spaces) name their [start, start+size) only;
    // a line cut at the end of the file is read once it is whole.
    void namesBlobsAndWaitsForWholeLines()
    {
        const std::string path = m_dir.filePath(QStringLiteral("perf-1.map")).toStdString();
        write(path, "3ba0b1e2a40 1c0 JS:*hotLoop /tmp/loop.js:1:19\n0x7f0010 10 trace_1_loop.lua:3\n7f00");
        PerfMap map(path);
        QVERIFY(map.refresh());
        QCOMPARE(map.entries(), size_t(2));
        QCOMPARE(map.lookup(0x3ba0b1e2a40), std::string_view("JS:*hotLoop /tmp/loop.js:1:19"));
        QCOMPARE(map.lookup(0x3ba0b1e2bff), std::string_view("JS:*hotLoop /tmp/loop.js:1:19"));
        QCOMPARE(map.lookup(0x3ba0b1e2c00), std::string_view());
        QCOMPARE(map.lookup(0x7f001f), std::string_view("trace_1_loop.lua:3"));
        QCOMPARE(map.lookup(0x7f0020), std::string_view());
        write(path, "40 20 LazyCompile:~later\n", "a"); // completes the cut line: "7f0040 20 ..."
        QVERIFY(map.refresh());
        QCOMPARE(map.entries(), size_t(3));
        QCOMPARE(map.lookup(0x7f0050), std::string_view("LazyCompile:~later"));
        QCOMPARE(map.malformedLines(), size_t(0));
    }

    // Code freed and the memory reused: the line written last names the address, as in perf.
    void laterLinesWin()
    {
        const std::string path = m_dir.filePath(QStringLiteral("perf-2.map")).toStdString();
        write(path, "1000 100 old\n1040 10 inner\n1000 100 new\n");
        PerfMap map(path);
        QVERIFY(map.refresh());
        QCOMPARE(map.lookup(0x1010), std::string_view("new"));
        QCOMPARE(map.lookup(0x1045), std::string_view("new"));
        write(path, "1040 10 newest\n", "a");
        QVERIFY(map.refresh());
        QCOMPARE(map.lookup(0x1045), std::string_view("newest"));
        QCOMPARE(map.lookup(0x1050), std::string_view("new"));
    }

    // Garbage, binary bytes, a zero size, an address range that wraps, a line without a name: skipped and counted;
    // the good lines around them still count.
    void malformedLinesAreSkipped()
    {
        const std::string path = m_dir.filePath(QStringLiteral("perf-3.map")).toStdString();
        write(path, std::string("hello world\n2000 zz bad\n2000 0 empty\nffffffffffffff00 200 wraps\n3000 10\n") +
                        std::string("40\0\x01 10 binary\n", 15) + "4000 10 good\n");
        PerfMap map(path);
        QVERIFY(map.refresh());
        QCOMPARE(map.entries(), size_t(1));
        QCOMPARE(map.malformedLines(), size_t(6));
        QCOMPARE(map.lookup(0x4008), std::string_view("good"));
        QVERIFY(map.describe().find("6 malformed") != std::string::npos);
    }

    // A new process with the same pid rewrites the file: it is read again from the start.
    void rewrittenFileIsReadAgain()
    {
        const std::string path = m_dir.filePath(QStringLiteral("perf-4.map")).toStdString();
        write(path, "1000 10 first_process_function_with_a_long_name\n");
        PerfMap map(path);
        QVERIFY(map.refresh());
        write(path, "5000 10 second\n");
        QVERIFY(map.refresh());
        QCOMPARE(map.lookup(0x1000), std::string_view());
        QCOMPARE(map.lookup(0x5000), std::string_view("second"));
    }

    // A file over the limit is read up to it and said so; a missing file is no error, only nothing known.
    void limitsAndMissingFiles()
    {
        const std::string path = m_dir.filePath(QStringLiteral("perf-5.map")).toStdString();
        std::string text;
        for (int i = 0; i < 1000; ++i)
            text += std::to_string(1000 + i * 16) + " 10 f" + std::to_string(i) + "\n";
        write(path, text);
        PerfMap::Limits limits;
        limits.maxBytes = 4096;
        PerfMap map(path, limits);
        QVERIFY(map.refresh());
        QVERIFY(map.truncatedAtLimit());
        QVERIFY(map.entries() > 100 && map.entries() < 1000);
        QVERIFY(map.describe().find("read only its first") != std::string::npos);
        PerfMap missing(m_dir.filePath(QStringLiteral("perf-6.map")).toStdString());
        QVERIFY(!missing.refresh());
        QCOMPARE(missing.lookup(0x1000), std::string_view());
        QVERIFY(missing.describe().find("not found") != std::string::npos);
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestPerfMap)
#include "tst_perf_map.moc"
