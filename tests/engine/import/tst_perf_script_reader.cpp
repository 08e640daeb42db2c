// `perf script` text (engine/import/perf_script_reader.h): headers with and without pid, cpu and period, comms
// with spaces, C++ symbols with spaces and parentheses, inlined and unknown frames, samples per thread, and bad
// input named by line (cut lines, binary bytes, a second event, tracepoint data, frames outside a sample).
#include "engine/analysis/function_table.h"
#include "engine/import/perf_script_reader.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

#include <map>

using namespace emberline::engine;

namespace {

// Two threads of `spin`, as `perf script` prints a cpu-clock recording with call chains.
const char *kScript = "# ========\n"
                      "# captured on: x\n"
                      "spin  1509 14773.167766:    1001001 cpu-clock: \n"
                      "\t    55d5c1a2b3c4 hot+0x15 (/tmp/spin)\n"
                      "\t    55d5c1a2b400 main+0x40 (/tmp/spin)\n"
                      "\t    7f0000001234 __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
                      "\n"
                      "spin  1509 14773.168766:    1001000 cpu-clock: \n"
                      "\t    55d5c1a2b3c8 hot+0x19 (/tmp/spin)\n"
                      "\t    55d5c1a2b400 main+0x40 (/tmp/spin)\n"
                      "\t    7f0000001234 __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
                      "\n"
                      "Web Worker  1600/1601 [002] 14773.169766:    999000 cpu-clock: \n"
                      "\t    15c2a get_extended_indices+0x59a (inlined)\n"
                      "\t    15c2a ns::Q<int>::run(int, char const*) const+0x1a (/tmp/spin)\n"
                      "\t    7f1 [unknown] (/usr/lib/libz.so.1)\n"
                      "\n";

Result<Profile> parse(std::string_view text)
{
    PerfScriptParser parser("t.perf");
    size_t number = 1;
    for (size_t pos = 0; pos < text.size(); ++number) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        if (Status s = parser.feed(text.substr(pos, end - pos), number); !s)
            return s.error();
        pos = end + 1;
    }
    return parser.finish();
}

std::string errorOf(std::string_view text)
{
    auto r = parse(text);
    return r ? std::string() : r.error().message;
}

} // namespace

class TestPerfScriptReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, samples, periods, frames or threads are misread from well-formed perf script text.
    void readsSamples()
    {
        auto p = parse(kScript);
        QVERIFY2(p, p ? "" : p.error().message.c_str());
        QCOMPARE(p->sampleTypes().size(), size_t(2));
        QCOMPARE(p->str(p->sampleTypes()[1].type), std::string("cpu-clock"));
        QCOMPARE(p->str(p->sampleTypes()[1].unit), std::string("nanoseconds"));
        QCOMPARE(p->defaultSampleTypeIndex(), 1);
        const std::vector<int64_t> totals = p->totals();
        QCOMPARE(totals[0], int64_t(3));
        QCOMPARE(totals[1], int64_t(1001001 + 1001000 + 999000));
        const FrameTable frames(p.value());
        const auto table = FunctionTable::build(p.value(), frames, valuesPerStack(p.value(), 0, {}));
        std::map<std::string, std::pair<int64_t, int64_t>> c;
        for (const auto &row : table->rows())
            c[frames.frame(row.frame).name] = {row.self, row.total};
        QCOMPARE(c.at("hot"), std::make_pair(int64_t(2), int64_t(2))); // two offsets, one function
        QCOMPARE(c.at("main"), std::make_pair(int64_t(0), int64_t(2)));
        QCOMPARE(c.at("get_extended_indices"), std::make_pair(int64_t(1), int64_t(1)));
        QCOMPARE(c.at("ns::Q<int>::run(int, char const*) const"), std::make_pair(int64_t(0), int64_t(1)));
        QCOMPARE(c.at("[unknown] (libz.so.1)"), std::make_pair(int64_t(0), int64_t(1)));
        // Threads: the comm with a space and the tid after the slash.
        bool sawWorker = false;
        for (size_t i = 0; i < p->sampleCount(); ++i) {
            for (const Label &l : p->sampleLabels(i)) {
                if (p->str(l.key) == "thread name" && p->str(l.str) == "Web Worker")
                    sawWorker = true;
                if (p->str(l.key) == "thread id")
                    QVERIFY(l.num == 1509 || l.num == 1601);
            }
        }
        QVERIFY(sawWorker);
    }

    // If this fails, samples recorded without call chains (the frame on the header line) or without periods are
    // no longer read.
    void headerOnlySamplesAndNoPeriod()
    {
        auto p = parse("app 10 1.000001: cycles:u:  401000 f+0x1 (/bin/app)\n"
                       "app 10 1.000002: cycles:u:  401100 g+0x1 (/bin/app)\n");
        QVERIFY2(p, p ? "" : p.error().message.c_str());
        QCOMPARE(p->sampleTypes().size(), size_t(1));
        QCOMPARE(p->totals()[0], int64_t(2));
    }

    // If this fails, bad perf script text is no longer an error that names the line and the problem.
    void badInputIsNamed()
    {
        const std::string good = "spin  1509 14773.167766:    1001001 cpu-clock: \n\t    55d5 hot+0x15 (/tmp/spin)\n\n";
        std::string e = errorOf(good + "spin  1509 1477");
        QVERIFY2(e.find("line 4") != std::string::npos && e.find("sample header") != std::string::npos, e.c_str());
        e = errorOf(good + "spin  1509 14773.2:    1001001 cpu-clock: \n\t    55d5 ho");
        QVERIFY2(e.find("line 5") != std::string::npos && e.find("cut or damaged") != std::string::npos, e.c_str());
        e = errorOf(good + std::string("\x7f"
                                       "ELF\x02\x01\x01\x00\x00",
                                       9));
        QVERIFY2(e.find("line 4") != std::string::npos && e.find("binary") != std::string::npos, e.c_str());
        e = errorOf(good + "spin  1509 14773.2:    1 cycles: \n\t    55d5 hot+0x15 (/tmp/spin)\n");
        QVERIFY2(e.find("line 4") != std::string::npos && e.find("event 'cycles' differs") != std::string::npos,
                 e.c_str());
        e = errorOf("perf 12 [000] 1.5: 1 sched:sched_switch: prev_comm=perf prev_pid=12 ==> next_comm=x\n");
        QVERIFY2(e.find("line 1") != std::string::npos && e.find("not a frame") != std::string::npos, e.c_str());
        e = errorOf("\t    55d5 hot+0x15 (/tmp/spin)\n");
        QVERIFY2(e.find("outside of a sample") != std::string::npos, e.c_str());
        // A frame seen before is matched by the text after its address: the address and the rest are still checked.
        e = errorOf(good + "spin  1509 14773.2:    1001001 cpu-clock: \n\t    55zz hot+0x15 (/tmp/spin)\n");
        QVERIFY2(e.find("line 5") != std::string::npos && e.find("damaged address") != std::string::npos, e.c_str());
        e = errorOf(good + "spin  1509 14773.2:    1001001 cpu-clock: \n\t    55d5 hot+0x15 (/tmp/sp\x01n)\n");
        QVERIFY2(e.find("line 5") != std::string::npos && e.find("binary") != std::string::npos, e.c_str());
        e = errorOf("# nothing\n");
        QVERIFY2(e.find("no sample") != std::string::npos, e.c_str());
    }

    // If this fails, reading a file loses, splits or joins lines where the reader's blocks meet, or a line too long
    // for a text profile is no longer refused.
    void fileReadAcrossBlocks()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // About 12 MiB of samples with CRLF line ends: several of the reader's blocks, cut at arbitrary bytes.
        std::string text;
        int64_t expected = 0;
        for (int i = 0; text.size() < (12u << 20); ++i) {
            const int period = 1000 + i % 7;
            expected += period;
            text += "spin  1509 1.000" + std::to_string(i) + ":    " + std::to_string(period) + " cpu-clock: \r\n";
            text += "\t    55d5c1a2b3c4 f" + std::to_string(i % 13) + "+0x15 (/tmp/spin)\r\n";
            text += "\t    55d5c1a2b400 main+0x40 (/tmp/spin)\r\n\r\n";
        }
        const std::string path = dir.filePath("big.perf").toStdString();
        {
            std::ofstream out(path, std::ios::binary);
            out << text;
        }
        auto p = readPerfScriptFile(path);
        QVERIFY2(p, p ? "" : p.error().message.c_str());
        QCOMPARE(p->totals()[1], expected);
        const FrameTable frames(p.value());
        const auto functions = FunctionTable::build(p.value(), frames, valuesPerStack(p.value(), 1, {}));
        QVERIFY(functions);
        QCOMPARE(functions->rows().size(), size_t(14)); // f0..f12 and main
        QCOMPARE(functions->grandTotal(), expected);

        std::string longLine =
            "spin  1509 1.0:    1 cpu-clock: \n\t    55d5 " + std::string(2u << 20, 'x') + " (/tmp/spin)\n";
        const std::string longPath = dir.filePath("long.perf").toStdString();
        {
            std::ofstream out(longPath, std::ios::binary);
            out << longLine;
        }
        auto refused = readPerfScriptFile(longPath);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("line 2 is longer than 1 MiB") != std::string::npos,
                 refused.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPerfScriptReader)
#include "tst_perf_script_reader.moc"
