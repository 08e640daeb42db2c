// The pprof reader against inputs that are valid protobuf but more than a profile can sensibly hold: a gzip
// bomb of tiny repeated samples, and each of the count, memory and message-size limits on its own. Each must
// be refused with a Limit error that names the file and the limit, while the profile is being parsed.

#include "tests/engine/test_support.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/profile.pb.h"

#include <QTemporaryDir>
#include <QTest>

#include <zlib.h>

#include <cstdio>

using namespace emberline;
using namespace emberline::engine;
namespace pb = perftools::profiles;

namespace {

// A valid profile with one location and no samples: the head of every input below.
pb::Profile head()
{
    pb::Profile m;
    for (const char *s : {"", "samples", "count", "main", "thread id"})
        m.add_string_table(s);
    auto *st = m.add_sample_type();
    st->set_type(1);
    st->set_unit(2);
    auto *fn = m.add_function();
    fn->set_id(1);
    fn->set_name(3);
    auto *loc = m.add_location();
    loc->set_id(1);
    loc->add_line()->set_function_id(1);
    return m;
}

// One tiny sample (location 1, value 1) as it appears in Profile: tag, length, fields. Six bytes.
const std::string kTinySample("\x12\x04\x08\x01\x10\x01", 6);

// Writes the head and then `samples` tiny samples as one gzip member, streamed through zlib, so that a
// gigabyte-sized bomb costs a few megabytes of disk and no big buffer. Returns the file's size, 0 on error.
qint64 writeBomb(const QString &path, uint64_t samples)
{
    std::FILE *f = std::fopen(path.toLocal8Bit().constData(), "wb");
    if (!f)
        return 0;
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(1 << 16, '\0');
    auto feed = [&](const std::string &in, int flush) {
        z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
        z.avail_in = static_cast<uInt>(in.size());
        do {
            z.next_out = reinterpret_cast<Bytef *>(out.data());
            z.avail_out = static_cast<uInt>(out.size());
            deflate(&z, flush);
            std::fwrite(out.data(), 1, out.size() - z.avail_out, f);
        } while (z.avail_out == 0);
    };
    feed(head().SerializeAsString(), Z_NO_FLUSH);
    std::string chunk;
    for (int i = 0; i < (1 << 18); ++i) // 1.5 MiB of samples
        chunk += kTinySample;
    const uint64_t perChunk = 1 << 18;
    for (uint64_t done = 0; done < samples; done += perChunk)
        feed(samples - done >= perChunk ? chunk : chunk.substr(0, (samples - done) * kTinySample.size()), Z_NO_FLUSH);
    feed(std::string(), Z_FINISH);
    deflateEnd(&z);
    const long size = std::ftell(f);
    std::fclose(f);
    return size;
}

std::string rawWithSamples(uint64_t samples)
{
    std::string raw = head().SerializeAsString();
    raw.reserve(raw.size() + samples * kTinySample.size());
    for (uint64_t i = 0; i < samples; ++i)
        raw += kTinySample;
    return raw;
}

bool mentions(const Error &e, const char *what)
{
    return e.message.find(what) != std::string::npos;
}

} // namespace

class TestPprofReaderLimits : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gzipBombOfTinySamples();
    void compressionRatio();
    void sampleCount();
    void tableEntries();
    void modelMemory();
    void oversizedMessage();
    void modelBytesPerInputByte();
    void sensibleProfilesStillOpen();
};

// If this fails, a 2 MB file of 1.5 GB of tiny samples is parsed to the end (a minute, gigabytes of memory)
// instead of being refused as soon as it shows itself for what it is.
void TestPprofReaderLimits::gzipBombOfTinySamples()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bomb.pprof"));
    const qint64 size = writeBomb(path, 250'000'000); // 1.5 GB decompressed
    QVERIFY(size > 0 && size < (8 << 20));
    auto r = readPprofFile(path.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(r.error().message.starts_with(path.toStdString() + ": "), r.error().message.c_str());
    QVERIFY2(mentions(r.error(), "gzip bomb"), r.error().message.c_str());
}

// If this fails, the ratio check is either missing or fires on honest input.
void TestPprofReaderLimits::compressionRatio()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("ratio.pprof"));
    QVERIFY(writeBomb(path, 2'000'000) > 0); // 12 MB inflated from a few tens of KB
    PprofReadOptions options;
    options.ratioCheckAfterBytes = 1 << 20;
    auto r = readPprofFile(path.toStdString(), options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(mentions(r.error(), "times their size"), r.error().message.c_str());
    // Under the default threshold (64 MiB of output) the same file is a valid profile.
    auto ok = readPprofFile(path.toStdString());
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message.c_str());
    QCOMPARE(ok->sampleCount(), size_t(2'000'000));
    // Raw input has no ratio: held by the other limits only.
    options.maxCompressionRatio = 1;
    QVERIFY(readPprofBytes(rawWithSamples(300'000), "raw.pb", options).ok());
}

// If this fails, a file may hold any number of samples below the decompressed limit.
void TestPprofReaderLimits::sampleCount()
{
    PprofReadOptions options;
    options.maxSamples = 100'000;
    auto r = readPprofBytes(rawWithSamples(200'000), "many.pb", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(r.error().message.starts_with("many.pb: more than 100000 samples"), r.error().message.c_str());
    QVERIFY(readPprofBytes(rawWithSamples(90'000), "fewer.pb", options).ok());
}

// If this fails, millions of empty locations (2 bytes each in the file, a hundred in memory) are all kept.
void TestPprofReaderLimits::tableEntries()
{
    pb::Profile m = head();
    for (int i = 2; i < 50'000; ++i)
        m.add_location()->set_id(static_cast<uint64_t>(i));
    PprofReadOptions options;
    options.maxTableEntries = 20'000;
    auto r = readPprofBytes(m.SerializeAsString(), "locations.pb", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(mentions(r.error(), "more than 20000 locations"), r.error().message.c_str());
    QVERIFY(readPprofBytes(m.SerializeAsString(), "locations.pb").ok());
}

// If this fails, the memory the profile takes is not watched while it is built: labels cost 24 bytes each
// in memory for 4 to 6 in the file (each sample's are its own here: a set shared by samples is kept once).
void TestPprofReaderLimits::modelMemory()
{
    pb::Profile m = head();
    for (int i = 0; i < 100'000; ++i) {
        auto *s = m.add_sample();
        s->add_location_id(1);
        s->add_value(1);
        for (int l = 0; l < 10; ++l) {
            auto *label = s->add_label();
            label->set_key(4);
            label->set_num(i * 10 + l);
        }
    }
    const std::string raw = m.SerializeAsString();
    PprofReadOptions options;
    options.maxModelBytes = 8 << 20; // 100,000 samples x 10 labels x 24 bytes is 24 MB
    auto r = readPprofBytes(raw, "labels.pb", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(mentions(r.error(), "MiB of memory"), r.error().message.c_str());
    auto ok = readPprofBytes(raw, "labels.pb");
    QVERIFY(ok.ok());
    QCOMPARE(ok->sampleCount(), size_t(100'000));
}

// If this fails, one sample of a billion location ids is decoded into memory in one go.
void TestPprofReaderLimits::oversizedMessage()
{
    pb::Profile m = head();
    auto *s = m.add_sample();
    s->add_value(1);
    for (int i = 0; i < 300'000; ++i)
        s->add_location_id(1);
    PprofReadOptions options;
    options.maxMessageBytes = 64 << 10;
    auto r = readPprofBytes(m.SerializeAsString(), "deep.pb", options);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(mentions(r.error(), "a sample of"), r.error().message.c_str());
    QVERIFY(readPprofBytes(m.SerializeAsString(), "deep.pb").ok());
}

// If this fails, a flood of empty messages (2 bytes each in the file, 72 in memory) is kept until it reaches
// the absolute limits, gigabytes later.
void TestPprofReaderLimits::modelBytesPerInputByte()
{
    std::string raw = head().SerializeAsString();
    const std::string emptyLocation("\x22\x00", 2);
    for (int i = 0; i < 2'000'000; ++i)
        raw += emptyLocation;
    auto r = readPprofBytes(raw, "empty-locations.pb");
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Limit);
    QVERIFY2(mentions(r.error(), "times their size"), r.error().message.c_str());
    // Without that check the same file is refused later (here: it has no valid ids), never accepted.
    PprofReadOptions options;
    options.maxModelBytesPerInputByte = 1000;
    auto later = readPprofBytes(raw, "empty-locations.pb", options);
    QVERIFY(!later.ok());
    QVERIFY2(!mentions(later.error(), "times their size"), later.error().message.c_str());
}

// If this fails, the limits are so tight that real profiles are refused.
void TestPprofReaderLimits::sensibleProfilesStillOpen()
{
    for (const QString &file : test::realFiles()) {
        auto r = readPprofFile(test::realPath(file));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    }
    // The defaults leave room for a long session: millions of samples and a gigabyte of model.
    const PprofReadOptions d;
    QVERIFY(d.maxSamples >= 10'000'000);
    QVERIFY(d.maxModelBytes >= (512ull << 20) && d.maxModelBytes <= (1536ull << 20));
    QVERIFY(d.maxCompressionRatio >= 50);
}

QTEST_GUILESS_MAIN(TestPprofReaderLimits)
#include "tst_pprof_reader_limits.moc"
