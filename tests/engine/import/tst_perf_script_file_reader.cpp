// Reading perf script text in parts on several threads (engine/import/perf_script_file_reader.h): the profile
// must be byte for byte the one reading the file whole makes, on real perf script output, on samples that straddle
// a cut, on files cut short anywhere, and bad input must give the same error as reading it whole. Also where the
// file is cut (text_parts.h), cancelling and progress.
#include "engine/import/perf_script_file_reader.h"
#include "engine/import/perf_script_reader.h"
#include "engine/import/text_parts.h"
#include "engine/pprof/pprof_writer.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <thread>

using namespace emberline::engine;

namespace {

const std::string kRealText = EMBERLINE_TEST_DATA "/perf/cpu_split.perf-script";

std::string readAll(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string &path, std::string_view text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// The profile as bytes (uncompressed pprof: every table, string and sample in order), or the error's words.
std::string outcome(const std::string &path, size_t parts, const PprofReadOptions &options = {})
{
    const Result<Profile> p = readPerfScriptFileInParts(path, options, parts);
    return p ? writePprof(p.value(), false) : "error: " + p.error().message;
}

// The file fed to a parser a line at a time, without the reader: no part, no sample known by its frames' text.
std::string fedLineByLine(const std::string &path)
{
    const std::string text = readAll(path);
    PerfScriptParser parser(path);
    size_t number = 0;
    for (size_t pos = 0; pos < text.size();) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view line = std::string_view(text).substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (Status s = parser.feed(line, ++number); !s)
            return "error: " + s.error().message;
        pos = end + 1;
    }
    const Result<Profile> p = parser.finish();
    return p ? writePprof(p.value(), false) : "error: " + p.error().message;
}

std::string sample(int i, std::string_view leaf)
{
    return "spin  1509/" + std::to_string(1510 + i % 3) + " 1.0" + std::to_string(i) + ":    " +
           std::to_string(1000 + i % 5) + " cpu-clock: \n\t    55d5c1a2b3" + std::to_string(i % 10) + " " +
           std::string(leaf) + "+0x15 (/tmp/spin)\n\t    55d5c1a2b400 main+0x40 (/tmp/spin)\n" +
           "\t    7f12 [unknown] (/usr/lib/libz.so.1)\n\n";
}

} // namespace

class TestPerfScriptFileReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, reading real perf script output in parts gives another profile than reading it whole, or
    // reading it whole another than feeding its lines one by one: tables, strings, stacks or samples in another
    // order, samples lost or doubled where the parts meet, or a sample known by its frames' text misread.
    void realTextInPartsEqualsWhole()
    {
        const std::string whole = outcome(kRealText, 1);
        QVERIFY2(whole.rfind("error", 0) != 0, whole.c_str());
        QVERIFY(whole == fedLineByLine(kRealText));
        for (const size_t parts : {2, 3, 4, 7, 16})
            QVERIFY2(outcome(kRealText, parts) == whole, std::to_string(parts).c_str());
    }

    // If this fails, a file is cut inside a sample, or where no empty line ends one.
    void cutsAreAtSampleEnds()
    {
        const std::string text = readAll(kRealText);
        const int fd = ::open(kRealText.c_str(), O_RDONLY | O_CLOEXEC);
        QVERIFY(fd >= 0);
        const std::vector<uint64_t> cuts = cutAtSampleEnds(fd, text.size(), 5);
        ::close(fd);
        QCOMPARE(cuts.size(), size_t(6));
        QCOMPARE(cuts.front(), uint64_t(0));
        QCOMPARE(cuts.back(), uint64_t(text.size()));
        for (size_t i = 1; i + 1 < cuts.size(); ++i) {
            QVERIFY(cuts[i] > cuts[i - 1]);
            QCOMPARE(text.substr(cuts[i] - 2, 2), std::string("\n\n"));
            QVERIFY(text.compare(cuts[i], 10, "cpu_split ") == 0); // the next sample's header
        }
    }

    // If this fails, a sample that straddles the middle of the file (the cut moves to its end), samples of
    // several threads, a new function first seen in the second part, or CRLF line ends read differently in parts.
    void straddlingSamplesAndCrlf()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::string text = "# header comment\n";
        for (int i = 0; i < 40; ++i)
            text += sample(i, "f" + std::to_string(i % 4));
        // One long sample in the middle: every cut near it lands after it.
        text += "spin  1509/1510 2.0:    1 cpu-clock: \n";
        for (int d = 0; d < 400; ++d)
            text +=
                "\t    55d5c1a2b4" + std::to_string(d % 10) + " deep" + std::to_string(d % 7) + "+0x1 (/tmp/spin)\n";
        text += "\n";
        for (int i = 40; i < 80; ++i)
            text += sample(i, "g" + std::to_string(i % 6)); // functions the first half never saw
        const std::string path = dir.filePath("t.perf").toStdString();
        writeAll(path, text);
        const std::string whole = outcome(path, 1);
        QVERIFY2(whole.rfind("error", 0) != 0, whole.c_str());
        QVERIFY(whole == fedLineByLine(path));
        for (const size_t parts : {2, 3, 5})
            QVERIFY2(outcome(path, parts) == whole, std::to_string(parts).c_str());

        std::string crlf;
        for (const char c : text)
            crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        writeAll(path, crlf);
        QVERIFY(outcome(path, 1) == whole);
        QVERIFY(outcome(path, 3) == whole);
    }

    // If this fails, a file cut short somewhere (a cut line, a sample without its end) reads differently in parts
    // than whole: another profile, or another error.
    void truncatedFilesAsWhole()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string text = readAll(kRealText);
        const std::string path = dir.filePath("cut.perf").toStdString();
        for (size_t length = text.size() / 3; length < text.size(); length += text.size() / 23 + 7) {
            writeAll(path, std::string_view(text).substr(0, length));
            const std::string whole = outcome(path, 1);
            QVERIFY2(whole == fedLineByLine(path), std::to_string(length).c_str());
            QVERIFY2(outcome(path, 2) == whole && outcome(path, 3) == whole, std::to_string(length).c_str());
        }
    }

    // If this fails, bad input in a later part is no longer named with the whole file's line number, parts with
    // different events are joined, an error in the first part is lost, or lines after (or inside) a sample known by
    // its frames' text are numbered or checked otherwise than line by line.
    void errorsAsWhole()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::string good;
        for (int i = 0; i < 60; ++i)
            good += sample(i, "f");
        const std::string path = dir.filePath("bad.perf").toStdString();
        const std::vector<std::string> bad = {
            good + "spin  1509 1477",                                                // a cut header at the end
            good + "spin  1509 1.5:    1 cycles: \n\t    55d5 f+0x15 (/tmp/spin)\n", // a second event
            good + std::string("\x7f"
                               "ELF\x02\x01\x01\x00\x00",
                               9),                                        // binary bytes
            "spin  1509 1.0:    1 cpu-clock: \n\t    55d5 ho\n\n" + good, // a cut frame, first part
            good + "\t    55d5 f+0x15 (/tmp/spin)\n\n" + good,            // a frame outside of a sample
            good + sample(7, "f") +
                "spin  1509 1.5:    1 cpu-clock: \n\t    55zz f+0x15 (/tmp/spin)\n\n",        // bad address
            good + sample(7, "f").substr(0, sample(7, "f").size() - 1) + "\t    55d5 ho\n\n", // a known sample, cut
            good + sample(7, "f") + "\x01\n" + good, // binary after a known sample
        };
        for (const std::string &text : bad) {
            writeAll(path, text);
            const std::string whole = outcome(path, 1);
            QVERIFY2(whole.rfind("error: ", 0) == 0, text.substr(0, 80).c_str());
            QCOMPARE(whole, fedLineByLine(path));
            QCOMPARE(outcome(path, 2), whole);
            QCOMPARE(outcome(path, 4), whole);
        }
    }

    // If this fails, Cancel no longer stops a read in parts, or progress is not reported, goes backwards, or is
    // reported from another thread than the caller's (the window's loader is not ready for that).
    void cancelAndProgress()
    {
        std::atomic<bool> cancel{true};
        PprofReadOptions options;
        options.cancel = &cancel;
        const Result<Profile> cancelled = readPerfScriptFileInParts(kRealText, options, 3);
        QVERIFY(!cancelled);
        QCOMPARE(cancelled.error().code, Error::Code::Cancelled);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::string text;
        for (int i = 0; text.size() < (3u << 20); ++i)
            text += sample(i, "f" + std::to_string(i % 9));
        const std::string path = dir.filePath("big.perf").toStdString();
        writeAll(path, text);
        cancel = false;
        std::vector<double> seen;
        const std::thread::id caller = std::this_thread::get_id();
        bool otherThread = false;
        options.progress = [&](double fraction) {
            seen.push_back(fraction);
            otherThread = otherThread || std::this_thread::get_id() != caller;
        };
        const Result<Profile> p = readPerfScriptFileInParts(path, options, 2);
        QVERIFY2(p, p ? "" : p.error().message.c_str());
        QVERIFY(!otherThread);
        QVERIFY(!seen.empty());
        for (size_t i = 1; i < seen.size(); ++i)
            QVERIFY(seen[i] >= seen[i - 1]);
        QVERIFY(seen.back() > 0 && seen.back() <= 1.0);
        QCOMPARE(outcome(path, 2), outcome(path, 1));
    }
};

QTEST_GUILESS_MAIN(TestPerfScriptFileReader)
#include "tst_perf_script_file_reader.moc"
