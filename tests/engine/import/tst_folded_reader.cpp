// Folded stacks in (engine/import/folded_reader.h) and out (engine/report/folded_writer.h): the numbers a folded
// file holds, the round trip through the writer on a real Go profile, format sniffing, and bad input named by
// line (no count, a cut line, binary bytes, an empty frame, an empty file).
#include "engine/analysis/function_table.h"
#include "engine/import/folded_reader.h"
#include "engine/import/text_format.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/report/folded_writer.h"

#include <QTest>

#include <map>

using namespace emberline::engine;

namespace {

std::map<std::string, std::pair<int64_t, int64_t>> functionCosts(const Profile &p, int type)
{
    const FrameTable frames(p);
    const auto table = FunctionTable::build(p, frames, valuesPerStack(p, type, {}));
    std::map<std::string, std::pair<int64_t, int64_t>> out;
    for (const auto &row : table->rows())
        out[frames.frame(row.frame).name] = {row.self, row.total};
    return out;
}

std::string errorOf(std::string_view text)
{
    auto r = readFoldedText(text, "t.folded");
    return r ? std::string() : r.error().message;
}

} // namespace

class TestFoldedReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, folded lines are not read as root-first stacks with their counts added per stack.
    void readsStacks()
    {
        auto p = readFoldedText("# comment\nmain;work;leaf 7\nmain;work 3\n\nmain;work;leaf 2\nmain;other 1\n");
        QVERIFY2(p, p ? "" : p.error().message.c_str());
        QCOMPARE(p->sampleTypes().size(), size_t(1));
        QCOMPARE(p->str(p->sampleTypes()[0].type), std::string("samples"));
        QCOMPARE(p->sampleCount(), size_t(3)); // identical stacks are one sample
        const auto c = functionCosts(p.value(), 0);
        QCOMPARE(c.at("leaf"), std::make_pair(int64_t(9), int64_t(9)));
        QCOMPARE(c.at("work"), std::make_pair(int64_t(3), int64_t(12)));
        QCOMPARE(c.at("main"), std::make_pair(int64_t(0), int64_t(13)));
    }

    // If this fails, the writer and the reader disagree: a real Go profile written as folded stacks and read
    // back must have the same self and total for every function (the format keeps stacks of names and values).
    void roundTripOfARealProfile()
    {
        auto original = readPprofFile(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
        QVERIFY(original);
        const int cpu = original->sampleTypeIndex("cpu");
        auto folded = writeFoldedStacks(original.value(), "cpu");
        QVERIFY(folded);
        QVERIFY(folded->size() > 1000);
        auto back = readFoldedText(folded.value());
        QVERIFY2(back, back ? "" : back.error().message.c_str());
        const auto before = functionCosts(original.value(), cpu);
        const auto after = functionCosts(back.value(), 0);
        QCOMPARE(after.size(), before.size());
        for (const auto &[name, v] : before) {
            QVERIFY2(after.count(name), name.c_str());
            QCOMPARE(after.at(name), v);
        }
        // Written again, the text is the same: one line per distinct stack, sorted.
        QCOMPARE(writeFoldedStacks(back.value(), "").value(), folded.value());
    }

    // If this fails, a bad line is no longer an error that names it and says what is wrong.
    void badLinesAreNamed()
    {
        std::string e = errorOf("main;work 3\nmain;work\n");
        QVERIFY2(e.find("line 2") != std::string::npos && e.find("no count") != std::string::npos, e.c_str());
        e = errorOf("main;work 3\nmain;wo");
        QVERIFY2(e.find("line 2") != std::string::npos, e.c_str());
        e = errorOf("mainwork\n");
        QVERIFY2(e.find("line 1") != std::string::npos && e.find("no count") != std::string::npos, e.c_str());
        e = errorOf("main;;work 3\n");
        QVERIFY2(e.find("empty frame") != std::string::npos, e.c_str());
        e = errorOf(std::string_view("main;work 3\n\x01\x02\xff\xfe 4\n", 19));
        QVERIFY2(e.find("line 2") != std::string::npos && e.find("binary") != std::string::npos, e.c_str());
        e = errorOf("main;work 3x\n");
        QVERIFY2(e.find("'3x' is not a whole") != std::string::npos, e.c_str());
        e = errorOf("main;work -3\n");
        QVERIFY2(e.find("not a whole, non-negative") != std::string::npos, e.c_str());
        e = errorOf("# only a comment\n");
        QVERIFY2(e.find("no folded stack") != std::string::npos, e.c_str());
    }

    // If this fails, a file's format is no longer told by its content.
    void sniffing()
    {
        QCOMPARE(sniffFormat("main;work 3\n"), ProfileFormat::Folded);
        QCOMPARE(sniffFormat("PERFILE2\x68\x00\x00\x00"), ProfileFormat::PerfData);
        QCOMPARE(sniffFormat("\x1f\x8b\x08\x00"), ProfileFormat::Pprof);
        QCOMPARE(sniffFormat(std::string_view("\x0a\x0b\x08\x01\x10\x02", 6)), ProfileFormat::Pprof); // raw proto
        QCOMPARE(sniffFormat(""), ProfileFormat::Pprof);
        QCOMPARE(sniffFormat("spin  1509 14773.167766:    1001001 cpu-clock: \n\t 15c2a f+0x5 (/bin/x)\n"),
                 ProfileFormat::PerfScript);
        QCOMPARE(sniffFormat("Web Content 1509/1510 [003] 14773.167766: 1 cycles:u: \n"), ProfileFormat::PerfScript);
    }
};

QTEST_GUILESS_MAIN(TestFoldedReader)
#include "tst_folded_reader.moc"
