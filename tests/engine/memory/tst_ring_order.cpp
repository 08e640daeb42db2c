// The order in which the ring reader hands a process's images on: rings written by hand (the agent's layout), so
// that the directory holds two images of one process at once, as after a shell that execs its command at once.

#include "engine/agent/agent_protocol.h"
#include "engine/memory/ring_reader.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

namespace {

constexpr uint64_t kDataBytes = 4096;

// A ring file of process `pid` made at `createdNs`, holding a module record (its path `module`) and a free at
// `freeNs`; unmapped by the test's end.
struct HandRing {
    void *mem = nullptr;
    bool make(const QString &directory, uint32_t pid, uint64_t createdNs, const char *module, uint64_t freeNs)
    {
        const QString path = QStringLiteral("%1/%2-%3.ring").arg(directory).arg(pid).arg(createdNs);
        const int fd = ::open(path.toLocal8Bit().constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || ::ftruncate(fd, off_t(agent::kRingHeaderBytes + kDataBytes)) != 0)
            return false;
        mem = ::mmap(nullptr, agent::kRingHeaderBytes + kDataBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        if (mem == MAP_FAILED)
            return false;
        auto *h = static_cast<agent::RingHeader *>(mem);
        h->magic = agent::kRingMagic;
        h->version = agent::kRingVersion;
        h->pid = pid;
        h->dataBytes = kDataBytes;
        h->allocInterval = 1;
        h->createdNs = createdNs;
        h->reservedBytes.store(kDataBytes);
        uint8_t *data = static_cast<uint8_t *>(mem) + agent::kRingHeaderBytes;
        const size_t pathBytes = std::strlen(module);
        const uint32_t moduleBytes = uint32_t((sizeof(agent::ModuleRecord) + pathBytes + 7) & ~size_t(7));
        auto *record = reinterpret_cast<agent::ModuleRecord *>(data);
        record->header.bytes = moduleBytes;
        record->tid = pid;
        record->pathBytes = uint32_t(pathBytes);
        record->timeNs = createdNs;
        record->start = 0x400000;
        record->length = 0x1000;
        record->pgoff = 0;
        std::memcpy(reinterpret_cast<char *>(record + 1), module, pathBytes);
        record->header.type.store(uint32_t(agent::RecordType::Module));
        auto *free = reinterpret_cast<agent::FreeRecord *>(data + moduleBytes);
        free->header.bytes = uint32_t(sizeof(agent::FreeRecord));
        free->tid = pid;
        free->timeNs = freeNs;
        free->address = 0x1000;
        free->header.type.store(uint32_t(agent::RecordType::Free));
        h->head.store(moduleBytes + sizeof(agent::FreeRecord));
        return true;
    }
    ~HandRing()
    {
        if (mem && mem != MAP_FAILED)
            ::munmap(mem, agent::kRingHeaderBytes + kDataBytes);
    }
};

// What the reader said, in order: "start IMAGE", "module PATH", "free IMAGE", "end IMAGE".
class OrderSink final : public MemoryRecordSink, public ModuleRecordSink {
public:
    std::vector<std::string> said;
    void onAllocation(const AgentAllocation &) override { said.emplace_back("alloc"); }
    void onFree(uint64_t image, uint32_t, uint32_t, uint64_t, uint64_t) override
    {
        said.push_back("free " + std::to_string(image));
    }
    void onImageStart(uint64_t image, uint32_t, uint32_t) override { said.push_back("start " + std::to_string(image)); }
    void onImageEnd(uint64_t image, uint32_t) override { said.push_back("end " + std::to_string(image)); }
    void onImageModule(uint64_t, uint32_t, uint64_t, uint64_t, uint64_t, std::string_view path) override
    {
        said.push_back("module " + std::string(path));
    }
    QString text() const
    {
        QStringList all;
        for (const std::string &s : said)
            all << QString::fromStdString(s);
        return all.join(QLatin1String(", "));
    }
};

} // namespace

class TestRingOrder : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Two images of one process found in one look: the older one (its ring made first) is read to its end before
    // the newer one starts, whatever order the directory lists them in. If this fails, the newer image's start (an
    // exec, which drops the process's map) comes before the older image's records, which are then placed with the
    // newer image's map (the shell's allocations named "[unknown] 0x...").
    void olderImageFirst()
    {
        QTemporaryDir dir;
        const uint32_t pid = uint32_t(getpid()); // alive: neither image ends for the process's own end
        HandRing older, newer;
        QVERIFY(older.make(dir.path(), pid, 100, "/bin/bash", 150));
        QVERIFY(newer.make(dir.path(), pid, 200, "/usr/bin/ls", 250));
        RingReader rings(dir.path().toStdString());
        OrderSink sink;
        rings.poll(RingSinks{.memory = &sink, .modules = &sink});
        QCOMPARE(sink.text(), QStringLiteral("start 1, module /bin/bash, free 1, end 1, start 2, module /usr/bin/ls, "
                                             "free 2"));
    }

    // The older image's records stamped after the poll's time stay for a later poll: so does the newer image's
    // start. If this fails, the newer image starts (and drops the map) while the older one still has records to read.
    void newerImageWaitsForTheOlder()
    {
        QTemporaryDir dir;
        const uint32_t pid = uint32_t(getpid());
        HandRing older, newer;
        QVERIFY(older.make(dir.path(), pid, 100, "/bin/bash", 1000));
        QVERIFY(newer.make(dir.path(), pid, 200, "/usr/bin/ls", 250));
        RingReader rings(dir.path().toStdString());
        OrderSink sink;
        rings.poll(RingSinks{.memory = &sink, .modules = &sink}, 500);
        QCOMPARE(sink.text(), QStringLiteral("start 1, module /bin/bash"));
        rings.poll(RingSinks{.memory = &sink, .modules = &sink});
        QCOMPARE(sink.text(), QStringLiteral("start 1, module /bin/bash, free 1, end 1, start 2, module /usr/bin/ls, "
                                             "free 2"));
    }
};

QTEST_GUILESS_MAIN(TestRingOrder)
#include "tst_ring_order.moc"
