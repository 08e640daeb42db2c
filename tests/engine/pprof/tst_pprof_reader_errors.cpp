// The pprof reader on every kind of malformed input we can think of: each must come back as an Error naming
// the file and the problem, never as a crash, a hang or unbounded memory.

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

// A small, valid profile.proto message; each malformed case breaks one thing in it.
pb::Profile validMessage()
{
    pb::Profile m;
    for (const char *s : {"", "cpu", "nanoseconds", "main", "main.c", "/bin/app", "thread id"})
        m.add_string_table(s);
    auto *st = m.add_sample_type();
    st->set_type(1);
    st->set_unit(2);
    auto *map = m.add_mapping();
    map->set_id(1);
    map->set_memory_start(0x1000);
    map->set_memory_limit(0x2000);
    map->set_filename(5);
    auto *fn = m.add_function();
    fn->set_id(1);
    fn->set_name(3);
    fn->set_filename(4);
    auto *loc = m.add_location();
    loc->set_id(1);
    loc->set_mapping_id(1);
    loc->set_address(0x1234);
    auto *line = loc->add_line();
    line->set_function_id(1);
    line->set_line(7);
    auto *s = m.add_sample();
    s->add_location_id(1);
    s->add_value(10);
    auto *label = s->add_label();
    label->set_key(6);
    label->set_num(42);
    return m;
}

// A raw profile with `samples` samples over a few distinct stacks: valid, and as large as asked.
std::string largeRawProfile(int samples)
{
    pb::Profile m = validMessage();
    m.clear_sample();
    for (int i = 0; i < samples; ++i) {
        auto *s = m.add_sample();
        s->add_location_id(1);
        s->add_value(i % 7);
    }
    return m.SerializeAsString();
}

std::string gzipBytes(const std::string &raw)
{
    // writePprof gzips; re-reading and re-writing a raw profile would change it, so compress with zlib directly.
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, raw.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(raw.data()));
    z.avail_in = static_cast<uInt>(raw.size());
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

std::string varint(uint64_t v)
{
    std::string out;
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
    return out;
}

// Mutations for outOfRange(), indexed by its data rows.
std::vector<std::function<void(pb::Profile &)>> s_mutations;

std::string tag(int field, int wireType)
{
    return varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wireType));
}

} // namespace

class TestPprofReaderErrors : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void emptyFile();
    void nonexistentPathAndDirectory();
    void truncatedGzipAtEveryCut();
    void truncatedRawNeverCrashes();
    void corruptGzip();
    void randomBytes();
    void badTagsAndWireTypes_data();
    void badTagsAndWireTypes();
    void outOfRange_data();
    void outOfRange();
    void absurdSizes();
    void gzipBomb();
    void cancellation();
    void progressReported();
};

// If this fails, an empty file crashes the reader or yields an empty profile instead of saying it is empty.
void TestPprofReaderErrors::emptyFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("empty.pprof"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto r = readPprofFile(path.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Format);
    QVERIFY(r.error().message.find(path.toStdString()) != std::string::npos);
    QVERIFY(r.error().message.find("empty") != std::string::npos);
    auto m = readPprofBytes({}, "mem.pprof");
    QVERIFY(!m.ok());
    QVERIFY(m.error().message.starts_with("mem.pprof:"));
}

// If this fails, a missing file or a directory is reported badly (or a directory is read as an empty file).
void TestPprofReaderErrors::nonexistentPathAndDirectory()
{
    QTemporaryDir dir;
    const std::string missing = dir.filePath(QStringLiteral("nope.pprof")).toStdString();
    auto r = readPprofFile(missing);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Io);
    QVERIFY(r.error().message.starts_with(missing + ":"));
    QVERIFY(r.error().message.find("No such file") != std::string::npos);

    auto d = readPprofFile(dir.path().toStdString());
    QVERIFY(!d.ok());
    QCOMPARE(d.error().code, Error::Code::Io);
    QVERIFY(d.error().message.starts_with(dir.path().toStdString() + ":"));
}

// If this fails, a download or copy cut short opens as a smaller profile (silently wrong numbers) or crashes:
// gzip carries a length and CRC trailer, so every proper prefix of a gzip file must be refused.
void TestPprofReaderErrors::truncatedGzipAtEveryCut()
{
    for (const QString &file : {QStringLiteral("go-heap.pprof"), QStringLiteral("node-heap.pb.gz")}) {
        const QByteArray gz = test::readAll(test::pprofDir() + QLatin1Char('/') + file);
        QVERIFY(gz.size() > 100);
        for (qsizetype cut = 1; cut < gz.size(); ++cut) {
            auto r = readPprofBytes(std::string_view(gz.constData(), size_t(cut)), "cut.pprof");
            if (r.ok())
                QFAIL(qPrintable(
                    QStringLiteral("%1 cut at %2 of %3 bytes was accepted").arg(file).arg(cut).arg(gz.size())));
            QVERIFY(r.error().message.starts_with("cut.pprof: "));
            QCOMPARE(r.error().code, Error::Code::Format);
        }
    }
    // A larger file, in steps, from disk: the streaming file path must refuse the cut too.
    const QByteArray gz = test::readAll(test::pprofDir() + QStringLiteral("/go-cpu.pprof"));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("cut.pprof"));
    for (qsizetype cut = 1; cut < gz.size(); cut += 397) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(gz.left(cut));
        f.close();
        auto r = readPprofFile(path.toStdString());
        QVERIFY2(!r.ok(), qPrintable(QString::number(cut)));
        QVERIFY(r.error().message.starts_with(path.toStdString() + ": "));
    }
}

// If this fails, a cut raw protobuf crashes the reader. (A raw prefix that ends exactly between two fields is a
// valid, smaller message: protobuf has no end marker. Then it must at least not claim more than the full file.)
void TestPprofReaderErrors::truncatedRawNeverCrashes()
{
    const QByteArray raw = test::gunzip(test::readAll(test::pprofDir() + QStringLiteral("/go-cpu.pprof")));
    QVERIFY(!raw.isEmpty());
    size_t refused = 0;
    size_t cuts = 0;
    for (qsizetype cut = 0; cut < raw.size(); cut += 13) {
        ++cuts;
        auto r = readPprofBytes(std::string_view(raw.constData(), size_t(cut)), "raw.pprof");
        if (!r.ok()) {
            ++refused;
            QVERIFY(r.error().message.starts_with("raw.pprof: "));
        } else {
            QVERIFY(r->sampleCount() <= 805);
        }
    }
    // Location and string tables come after the samples in Go's files: nearly every cut loses a reference.
    QVERIFY2(refused > cuts * 9 / 10, qPrintable(QStringLiteral("%1 of %2").arg(refused).arg(cuts)));
}

// If this fails, corrupt compressed data is decoded into garbage or crashes zlib's caller.
void TestPprofReaderErrors::corruptGzip()
{
    const QByteArray gz = test::readAll(test::pprofDir() + QStringLiteral("/go-cpu.pprof"));
    // Bad CRC32 in the trailer (bytes size-8..size-5): the data is intact, the check must still fail.
    QByteArray badCrc = gz;
    badCrc[badCrc.size() - 6] = char(badCrc[badCrc.size() - 6] ^ 0x5A);
    auto r = readPprofBytes(test::view(badCrc), "crc.pprof");
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.starts_with("crc.pprof: "));
    QVERIFY2(r.error().message.find("gzip") != std::string::npos, r.error().message.c_str());

    // Bad length (ISIZE) in the trailer.
    QByteArray badSize = gz;
    badSize[badSize.size() - 1] = char(badSize[badSize.size() - 1] ^ 0x01);
    QVERIFY(!readPprofBytes(test::view(badSize), "size.pprof").ok());

    // Flipped bytes in the deflate stream, at many places.
    QRandomGenerator rng(1234);
    for (int i = 0; i < 300; ++i) {
        QByteArray b = gz;
        const qsizetype at = 10 + rng.bounded(b.size() - 18);
        b[at] = char(b[at] ^ (1 + rng.bounded(255)));
        auto res = readPprofBytes(test::view(b), "flip.pprof");
        QVERIFY2(!res.ok(), qPrintable(QStringLiteral("flip at %1 accepted").arg(at)));
        QVERIFY(res.error().message.starts_with("flip.pprof: "));
    }
    // A gzip header followed by garbage.
    QByteArray garbage("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-not-deflate", 29);
    auto g = readPprofBytes(test::view(garbage), "garbage.pprof");
    QVERIFY(!g.ok());
    QVERIFY(g.error().message.find("gzip") != std::string::npos);
}

// If this fails, random bytes crash or hang the reader, or are accepted as a profile.
void TestPprofReaderErrors::randomBytes()
{
    QRandomGenerator rng(42);
    for (int i = 0; i < 2000; ++i) {
        std::string bytes(size_t(1 + rng.bounded(4096)), '\0');
        for (char &c : bytes)
            c = char(rng.bounded(256));
        if (i % 2 == 0) { // also random bytes that claim to be gzip
            bytes[0] = '\x1f';
            if (bytes.size() > 1)
                bytes[1] = '\x8b';
        }
        auto r = readPprofBytes(bytes, "random.pprof");
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.starts_with("random.pprof: "));
    }
}

void TestPprofReaderErrors::badTagsAndWireTypes_data()
{
    QTest::addColumn<QByteArray>("suffix"); // appended to a valid raw profile
    QTest::addColumn<QString>("expected");
    auto b = [](const std::string &s) { return QByteArray(s.data(), qsizetype(s.size())); };
    QTest::newRow("tag zero") << b(std::string(1, '\0')) << QStringLiteral("field tag");
    QTest::newRow("field zero") << b(tag(0, 0) + varint(1)) << QStringLiteral("corrupt");
    QTest::newRow("sample as varint") << b(tag(2, 0) + varint(5)) << QStringLiteral("sample");
    QTest::newRow("string as varint") << b(tag(6, 0) + varint(5)) << QStringLiteral("string_table");
    QTest::newRow("time_nanos as bytes") << b(tag(9, 2) + varint(1) + "x") << QStringLiteral("time_nanos");
    QTest::newRow("location as fixed32") << b(tag(4, 5) + "abcd") << QStringLiteral("location");
    QTest::newRow("end group at top level") << b(tag(20, 4)) << QStringLiteral("corrupt");
    QTest::newRow("unknown wire type 7") << b(tag(20, 7)) << QStringLiteral("corrupt");
    QTest::newRow("unterminated varint") << b(tag(9, 0) + "\xff\xff\xff") << QStringLiteral("time_nanos");
    QTest::newRow("over-long varint") << b(tag(9, 0) + std::string(11, '\xff') + "\x01")
                                      << QStringLiteral("time_nanos");
    QTest::newRow("sample with bad inner tag")
        << b(tag(2, 2) + varint(2) + tag(1, 7) + "\x01") << QStringLiteral("sample");
    QTest::newRow("sample longer than the file")
        << b(tag(2, 2) + varint(50) + tag(1, 0) + "\x01") << QStringLiteral("sample");
    QTest::newRow("truncated packed comments") << b(tag(13, 2) + varint(5) + "\x01\x02") << QStringLiteral("comment");
}

// If this fails, a protobuf stream with a broken tag or a field of the wrong wire type is misread as something
// else (or crashes) rather than refused with the field's name.
void TestPprofReaderErrors::badTagsAndWireTypes()
{
    QFETCH(QByteArray, suffix);
    QFETCH(QString, expected);
    const std::string bytes = validMessage().SerializeAsString() + suffix.toStdString();
    auto r = readPprofBytes(bytes, "tags.pprof");
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.starts_with("tags.pprof: "));
    QVERIFY2(r.error().message.find(expected.toStdString()) != std::string::npos, r.error().message.c_str());
    // The same through gzip.
    auto g = readPprofBytes(gzipBytes(bytes), "tags.pprof.gz");
    QVERIFY(!g.ok());
    QVERIFY2(g.error().message.find(expected.toStdString()) != std::string::npos, g.error().message.c_str());
}

void TestPprofReaderErrors::outOfRange_data()
{
    using Mutation = std::function<void(pb::Profile &)>;
    QTest::addColumn<int>("index");
    QTest::addColumn<QString>("expected");
    struct Case {
        const char *name;
        Mutation mutate;
        const char *expected;
    };
    static const std::vector<Case> cases = {
        {"sample -> missing location", [](pb::Profile &m) { m.mutable_sample(0)->set_location_id(0, 99); },
         "missing location 99"},
        {"sample -> location id 2^63", [](pb::Profile &m) { m.mutable_sample(0)->add_location_id(1ull << 63); },
         "missing location 9223372036854775808"},
        {"location -> missing function",
         [](pb::Profile &m) { m.mutable_location(0)->mutable_line(0)->set_function_id(77); }, "missing function 77"},
        {"location -> missing mapping", [](pb::Profile &m) { m.mutable_location(0)->set_mapping_id(55); },
         "missing mapping 55"},
        {"location id zero", [](pb::Profile &m) { m.mutable_location(0)->set_id(0); }, "location id 0"},
        {"repeated function id", [](pb::Profile &m) { *m.add_function() = m.function(0); }, "function id 1"},
        {"repeated mapping id", [](pb::Profile &m) { *m.add_mapping() = m.mapping(0); }, "mapping id 1"},
        {"function name past the table", [](pb::Profile &m) { m.mutable_function(0)->set_name(1000); },
         "function name refers to string 1000"},
        {"function file negative", [](pb::Profile &m) { m.mutable_function(0)->set_filename(-1); },
         "refers to string -1"},
        {"mapping file past the table", [](pb::Profile &m) { m.mutable_mapping(0)->set_filename(7); },
         "refers to string 7"},
        {"sample type past the table", [](pb::Profile &m) { m.mutable_sample_type(0)->set_type(8); },
         "sample type refers to string 8"},
        {"sample type huge", [](pb::Profile &m) { m.mutable_sample_type(0)->set_unit(int64_t(1) << 40); }, "string"},
        {"label key past the table", [](pb::Profile &m) { m.mutable_sample(0)->mutable_label(0)->set_key(9); },
         "label key refers to string 9"},
        {"label value negative", [](pb::Profile &m) { m.mutable_sample(0)->mutable_label(0)->set_str(-3); }, "label"},
        {"label key 2^40", [](pb::Profile &m) { m.mutable_sample(0)->mutable_label(0)->set_key(int64_t(1) << 40); },
         "label"},
        {"period type past the table", [](pb::Profile &m) { m.mutable_period_type()->set_type(31); },
         "period_type refers to string 31"},
        {"comment past the table", [](pb::Profile &m) { m.add_comment(12); }, "comment refers to string 12"},
        {"default sample type negative", [](pb::Profile &m) { m.set_default_sample_type(-1); }, "default_sample_type"},
        {"drop_frames past the table", [](pb::Profile &m) { m.set_drop_frames(100); }, "drop_frames"},
        {"string_table[0] not empty", [](pb::Profile &m) { m.set_string_table(0, "oops"); },
         "string_table[0] must be the empty string"},
        {"no string table", [](pb::Profile &m) { m.clear_string_table(); }, "string table"},
        {"no sample types", [](pb::Profile &m) { m.clear_sample_type(); }, "no sample types"},
        {"more values than types", [](pb::Profile &m) { m.mutable_sample(0)->add_value(3); },
         "samples carry 2 values but the profile declares 1"},
        {"samples disagree on value count",
         [](pb::Profile &m) {
             auto *s = m.add_sample();
             s->add_location_id(1);
             s->add_value(1);
             s->add_value(2);
         },
         "different numbers of values"},
    };
    for (size_t i = 0; i < cases.size(); ++i)
        QTest::newRow(cases[i].name) << int(i) << QString::fromLatin1(cases[i].expected);
    s_mutations.clear();
    for (const Case &c : cases)
        s_mutations.push_back(c.mutate);
}

// If this fails, a reference that does not resolve (to a location, function, mapping or string) is either
// accepted, leaving an index that later reads out of bounds, or refused without saying what is wrong.
void TestPprofReaderErrors::outOfRange()
{
    QFETCH(int, index);
    QFETCH(QString, expected);
    QVERIFY(validMessage().IsInitialized());
    auto valid = readPprofBytes(validMessage().SerializeAsString(), "valid.pprof");
    QVERIFY2(valid.ok(), valid.ok() ? "" : valid.error().message.c_str());

    pb::Profile m = validMessage();
    s_mutations[size_t(index)](m);
    auto r = readPprofBytes(m.SerializeAsString(), "bad.pprof");
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Format);
    QVERIFY(r.error().message.starts_with("bad.pprof: "));
    QVERIFY2(r.error().message.find(expected.toStdString()) != std::string::npos, r.error().message.c_str());
}

// If this fails, a length prefix that claims gigabytes makes the reader allocate them (or overflow an int)
// instead of refusing the file.
void TestPprofReaderErrors::absurdSizes()
{
    const std::string valid = validMessage().SerializeAsString();
    // A sample whose length prefix is 2^31 (one more than INT32_MAX) and 2^32-1.
    for (uint64_t length : {uint64_t(1) << 31, (uint64_t(1) << 32) - 1, uint64_t(1) << 40}) {
        auto r = readPprofBytes(valid + tag(2, 2) + varint(length) + "\x08\x01", "huge.pprof");
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.starts_with("huge.pprof: "));
        // A string that claims that length: refused by the string limit before any allocation.
        auto s = readPprofBytes(valid + tag(6, 2) + varint(length) + "abc", "huge.pprof");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().code == Error::Code::Limit || s.error().code == Error::Code::Format,
                 s.error().message.c_str());
    }
    // A real string over the option's maxStringBytes.
    pb::Profile m = validMessage();
    m.add_string_table(std::string(5000, 'x'));
    PprofReadOptions options;
    options.maxStringBytes = 4096;
    auto r = readPprofBytes(m.SerializeAsString(), "long.pprof", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY(r.error().message.starts_with("long.pprof: "));
    QVERIFY2(r.error().message.find("5000") != std::string::npos, r.error().message.c_str());
    // Under the limit it reads.
    options.maxStringBytes = 5000;
    QVERIFY(readPprofBytes(m.SerializeAsString(), "long.pprof", options).ok());
    // The default limit exists and is sane.
    QVERIFY(PprofReadOptions{}.maxStringBytes > 0 && PprofReadOptions{}.maxStringBytes <= (64u << 20));
}

// If this fails, a small gzip file that inflates to gigabytes is decompressed to the end (time and memory
// without bound) instead of being stopped at maxDecompressedBytes.
void TestPprofReaderErrors::gzipBomb()
{
    const std::string raw = largeRawProfile(200000); // about 1.4 MB raw, valid
    const std::string gz = gzipBytes(raw);
    QVERIFY(raw.size() > 1000000);
    QVERIFY(gz.size() < raw.size() / 20);
    auto ok = readPprofBytes(gz, "bomb.pprof");
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message.c_str());
    QCOMPARE(ok->sampleCount(), size_t(200000));

    PprofReadOptions options;
    options.maxDecompressedBytes = 256 << 10;
    auto r = readPprofBytes(gz, "bomb.pprof", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY(r.error().message.starts_with("bomb.pprof: "));
    QVERIFY2(r.error().message.find("decompressed size") != std::string::npos, r.error().message.c_str());
    // Raw input is held to the same limit.
    auto rr = readPprofBytes(raw, "bomb.pb", options);
    QVERIFY(!rr.ok());
    QCOMPARE(rr.error().code, Error::Code::Limit);
    // And from a file.
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("bomb.pprof")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(gz.data(), qint64(gz.size()));
    f.close();
    auto rf = readPprofFile(f.fileName().toStdString(), options);
    QVERIFY(!rf.ok());
    QCOMPARE(rf.error().code, Error::Code::Limit);

    // The default limit exists: finite and no larger than a machine can hold (4 GiB).
    const uint64_t def = PprofReadOptions{}.maxDecompressedBytes;
    QVERIFY(def >= (64ull << 20));
    QVERIFY(def <= (4ull << 30));
}

// If this fails, the loader ignores a cancel request and the GUI's Cancel button would not stop a long load.
void TestPprofReaderErrors::cancellation()
{
    std::atomic<bool> cancel{true};
    PprofReadOptions options;
    options.cancel = &cancel;
    const std::string big = gzipBytes(largeRawProfile(50000));
    auto r = readPprofBytes(big, "big.pprof", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Cancelled);
    QVERIFY(r.error().message.starts_with("big.pprof: "));
    // A small file is cancelled as well, when the flag is set before it starts.
    auto s = readPprofFile(test::realPath(QStringLiteral("go-heap.pprof")), options);
    QVERIFY(!s.ok());
    QCOMPARE(s.error().code, Error::Code::Cancelled);
    cancel = false;
    QVERIFY(readPprofBytes(big, "big.pprof", options).ok());
}

// If this fails, the progress bar of a long load never moves, or moves backwards or past 100%.
void TestPprofReaderErrors::progressReported()
{
    const std::string big = gzipBytes(largeRawProfile(50000));
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("big.pprof")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(big.data(), qint64(big.size()));
    f.close();
    std::vector<double> seen;
    PprofReadOptions options;
    options.progress = [&](double fraction) { seen.push_back(fraction); };
    QVERIFY(readPprofFile(f.fileName().toStdString(), options).ok());
    QVERIFY(!seen.empty());
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    QVERIFY(seen.front() >= 0.0 && seen.back() <= 1.0);
}

QTEST_GUILESS_MAIN(TestPprofReaderErrors)
#include "tst_pprof_reader_errors.moc"
