// Sample logs: every kind of record a sampler delivers comes back from the file as it went in; a cut, corrupt
// or foreign file is a clear error that names the file and where it broke, after the records before it.
#include "engine/sampler/sample_log.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::engine;

namespace {

// Keeps every callback as a line of text, so two sinks can be compared.
class TextSink final : public SampleSink {
public:
    std::vector<std::string> lines;
    void onSample(const RawSample &s) override
    {
        std::string regs, stack(s.stack.begin(), s.stack.end());
        for (uint64_t r : s.regs)
            regs += std::to_string(r) + ",";
        std::string kernel;
        for (uint64_t ip : s.kernelStack)
            kernel += std::to_string(ip) + ",";
        lines.push_back("sample " + std::to_string(int(s.kind)) + " " + std::to_string(s.pid) + "/" +
                        std::to_string(s.tid) + " t" + std::to_string(s.timeNs) + " p" + std::to_string(s.period) +
                        " w" + std::to_string(s.wallNs) + " s" + std::to_string(int(s.state)) + " ip" +
                        std::to_string(s.ip) + " k" + std::to_string(s.inKernel) + " same" +
                        std::to_string(s.sameStack) + " regs " + regs + " stack " + stack + " limit " +
                        std::to_string(s.stackLimit) + " kernel " + kernel);
    }
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool exec, uint64_t inode,
                std::string_view path) override
    {
        lines.push_back("mmap " + std::to_string(pid) + " " + std::to_string(start) + " " + std::to_string(length) +
                        " " + std::to_string(pgoff) + " " + std::to_string(exec) + " ino" + std::to_string(inode) +
                        " " + std::string(path));
    }
    void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) override
    {
        lines.push_back("comm " + std::to_string(pid) + "/" + std::to_string(tid) + " " + std::string(name) + " " +
                        std::to_string(exec));
    }
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override
    {
        lines.push_back("fork " + std::to_string(pid) + " " + std::to_string(ppid) + " " + std::to_string(tid));
    }
    void onExit(uint32_t pid, uint32_t tid) override
    {
        lines.push_back("exit " + std::to_string(pid) + " " + std::to_string(tid));
    }
    void onLost(uint64_t count) override { lines.push_back("lost " + std::to_string(count)); }
    void onSwitch(uint32_t pid, uint32_t tid, uint64_t t, bool out, bool preempted) override
    {
        lines.push_back("switch " + std::to_string(pid) + "/" + std::to_string(tid) + " " + std::to_string(t) + " " +
                        std::to_string(out) + std::to_string(preempted));
    }
};

void writeEveryKind(SampleSink &sink)
{
    const std::vector<uint64_t> regs{1, 2, 3, 0xffffffffffffffffull};
    const std::string stack("stack bytes\0with a NUL", 22);
    RawSample s;
    s.kind = RawSample::Kind::Periodic;
    s.pid = 10;
    s.tid = 11;
    s.timeNs = 123456789;
    s.period = 1000;
    s.wallNs = 2000;
    s.state = ThreadState::DiskWait;
    s.ip = 0x401000;
    s.inKernel = true;
    s.sameStack = false;
    s.regs = regs;
    s.stack = std::span(reinterpret_cast<const uint8_t *>(stack.data()), stack.size());
    s.stackLimit = 8192;
    sink.onMmap(10, 0x400000, 0x1000, 0, true, 1234567, "/usr/bin/some program");
    sink.onComm(10, 11, "worker", false);
    sink.onSample(s);
    s.kind = RawSample::Kind::Cpu;
    s.regs = {};
    s.stack = {};
    const std::vector<uint64_t> kernel{0xffffffff81001234ull, 0xffffffff81000080ull};
    s.kernelStack = kernel;
    sink.onSample(s);
    sink.onFork(12, 10, 12);
    sink.onSwitch(10, 11, 99, true, true);
    sink.onLost(7);
    sink.onExit(12, 12);
}

} // namespace

class TestSampleLog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTripsEveryRecord();
    void cutFileIsAnErrorAfterTheRecordsBefore();
    void foreignAndCorruptFilesAreRefused();
};

// If this fails, a replay would feed the pipeline something other than what the sampler delivered.
void TestSampleLog::roundTripsEveryRecord()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("a.log")).toStdString();
    TextSink direct;
    {
        auto w = SampleLogWriter::create(path);
        QVERIFY(w.ok());
        w.value()->setNext(&direct);
        writeEveryKind(*w.value());
        QCOMPARE(w.value()->records(), uint64_t(8));
        QVERIFY(w.value()->close().ok());
    }
    auto r = SampleLogReader::open(path);
    QVERIFY(r.ok());
    TextSink replayed;
    auto first = r.value()->deliver(replayed, 3);
    QVERIFY(first.ok());
    QCOMPARE(first.value(), size_t(3));
    QVERIFY(!r.value()->atEnd());
    auto rest = r.value()->deliver(replayed, 100);
    QVERIFY(rest.ok());
    QCOMPARE(rest.value(), size_t(5));
    QVERIFY(r.value()->atEnd());
    QCOMPARE(replayed.lines, direct.lines);
}

// If this fails, a log cut short (a full disk, a killed recorder) crashes the replay or loses what it holds.
void TestSampleLog::cutFileIsAnErrorAfterTheRecordsBefore()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("cut.log"));
    {
        auto w = SampleLogWriter::create(path.toStdString());
        QVERIFY(w.ok());
        writeEveryKind(*w.value());
        QVERIFY(w.value()->close().ok());
    }
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    const qint64 size = f.size();
    // Cut inside every record in turn: never a crash, always the records before the cut, then a clear error.
    for (qint64 cut = size - 1; cut > 40; cut -= 7) {
        QVERIFY(f.resize(cut));
        auto r = SampleLogReader::open(path.toStdString());
        QVERIFY(r.ok());
        TextSink sink;
        auto all = r.value()->deliver(sink, 100);
        if (all.ok()) {
            QVERIFY(r.value()->atEnd()); // the cut fell between two records
            continue;
        }
        QVERIFY2(all.error().message.find("cut.log") != std::string::npos, all.error().message.c_str());
        QVERIFY2(all.error().message.find("at byte") != std::string::npos, all.error().message.c_str());
        QCOMPARE(sink.lines.size(), size_t(r.value()->delivered()));
    }
}

// If this fails, any file would be taken for a sample log, or a corrupt length would allocate without bound.
void TestSampleLog::foreignAndCorruptFilesAreRefused()
{
    QTemporaryDir dir;
    const QString foreign = dir.filePath(QStringLiteral("foreign"));
    QFile f(foreign);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a sample log at all, just text\n");
    f.close();
    auto r = SampleLogReader::open(foreign.toStdString());
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, Error::Code::Format);

    const QString corrupt = dir.filePath(QStringLiteral("corrupt"));
    {
        auto w = SampleLogWriter::create(corrupt.toStdString());
        QVERIFY(w.ok());
        w.value()->onLost(1);
        QVERIFY(w.value()->close().ok());
    }
    QFile c(corrupt);
    QVERIFY(c.open(QIODevice::ReadWrite));
    QByteArray bytes = c.readAll();
    const QByteArray huge("\x02\xff\xff\xff\x7f", 5); // an mmap record claiming 2 GiB
    bytes.append(huge);
    c.seek(0);
    c.write(bytes);
    c.close();
    auto rc = SampleLogReader::open(corrupt.toStdString());
    QVERIFY(rc.ok());
    TextSink sink;
    auto delivered = rc.value()->deliver(sink, 100);
    QVERIFY(!delivered.ok());
    QCOMPARE(sink.lines, std::vector<std::string>{"lost 1"});
    QVERIFY2(delivered.error().message.find("bytes") != std::string::npos, delivered.error().message.c_str());
}

QTEST_GUILESS_MAIN(TestSampleLog)
#include "tst_sample_log.moc"
