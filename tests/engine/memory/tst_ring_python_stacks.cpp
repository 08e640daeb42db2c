// A sample's Python frames as the ring reader gives them (agent_protocol.h's PythonFields): written whole the first
// time a process image's agent meets a Python stack (PythonDefines), named by their hash after that (PythonByHash),
// and whole with no name where the agent could not claim the stack (PythonInline). In a hand-made ring: each
// allocation must come with the frames its record gave or named; a hash the ring never defined gives none, counted,
// and the record's other fields still read. Were this wrong, exact mode on CPython would blame allocations on the
// wrong Python functions, or on none.

#include "engine/agent/agent_protocol.h"
#include "engine/memory/ring_reader.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace emberline;
using namespace emberline::engine;

namespace {

class PythonSink : public MemoryRecordSink {
public:
    void onAllocation(const AgentAllocation &a) override
    {
        python.emplace_back(a.python.frames.begin(), a.python.frames.end());
        sizes.push_back(a.size);
        stacks.push_back(std::vector<uint64_t>(a.walk.pcs.begin(), a.walk.pcs.end()));
    }
    void onFree(uint64_t, uint32_t, uint32_t, uint64_t, uint64_t) override {}
    void onImageStart(uint64_t, uint32_t, uint32_t) override {}
    void onImageEnd(uint64_t, uint32_t) override {}

    std::vector<std::vector<agent::PythonFrame>> python;
    std::vector<uint64_t> sizes;
    std::vector<std::vector<uint64_t>> stacks;
};

// Walked allocation records, one after the other in a ring's data.
struct RingWriter {
    uint8_t *data = nullptr;
    uint64_t at = 0;

    void alloc(uint64_t size, uint64_t stackHash, const std::vector<uint64_t> &pcs, uint8_t form, uint64_t pythonHash,
               const std::vector<agent::PythonFrame> &python)
    {
        const uint32_t bytes = uint32_t(sizeof(agent::WalkedAllocRecord) + pcs.size() * sizeof(uint64_t) +
                                        python.size() * sizeof(agent::PythonFrame));
        auto *r = reinterpret_cast<agent::WalkedAllocRecord *>(data + at);
        std::memset(static_cast<void *>(r), 0, bytes);
        r->header.bytes = bytes;
        r->tid = 7;
        r->frames = uint16_t(pcs.size());
        r->flags = pcs.empty() ? 0 : agent::WalkDefines;
        r->timeNs = 100 + at;
        r->address = 0x10000 + at;
        r->size = size;
        r->heapBytes = size;
        r->stackHash = stackHash;
        r->python.pythonFrames = uint16_t(python.size());
        r->python.pythonForm = form;
        r->python.pythonHash = pythonHash;
        auto *tail = reinterpret_cast<uint8_t *>(r + 1);
        std::memcpy(tail, pcs.data(), pcs.size() * sizeof(uint64_t));
        std::memcpy(tail + pcs.size() * sizeof(uint64_t), python.data(), python.size() * sizeof(agent::PythonFrame));
        r->header.type.store(uint32_t(agent::RecordType::AllocWalked));
        at += bytes;
    }
};

bool same(const std::vector<agent::PythonFrame> &a, const std::vector<agent::PythonFrame> &b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].code != b[i].code || a[i].instruction != b[i].instruction || a[i].flags != b[i].flags)
            return false;
    return true;
}

} // namespace

class TestRingPythonStacks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void framesDefinedOnceThenNamed()
    {
        QTemporaryDir dir;
        constexpr uint64_t kDataBytes = 8192;
        const QString path = dir.filePath(QStringLiteral("%1-1.ring").arg(getpid()));
        const int fd = ::open(path.toLocal8Bit().constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        QVERIFY(fd >= 0);
        QCOMPARE(::ftruncate(fd, off_t(agent::kRingHeaderBytes + kDataBytes)), 0);
        void *mem = ::mmap(nullptr, agent::kRingHeaderBytes + kDataBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ::close(fd);
        QVERIFY(mem != MAP_FAILED);
        auto *h = static_cast<agent::RingHeader *>(mem);
        h->magic = agent::kRingMagic;
        h->version = agent::kRingVersion;
        h->pid = uint32_t(getpid()); // alive: the image does not end
        h->dataBytes = kDataBytes;
        h->allocInterval = 1;
        h->reservedBytes.store(kDataBytes);

        const std::vector<agent::PythonFrame> outer = {{0x7000, 24, 0}, {0x7100, 8, agent::PythonFrameEntry}};
        const std::vector<agent::PythonFrame> inner = {{0x7200, 40, 0}};
        constexpr uint64_t kStack = 0xABC, kOuter = 0x1111, kInner = 0x2222, kNever = 0x3333;
        RingWriter w{static_cast<uint8_t *>(mem) + agent::kRingHeaderBytes};
        w.alloc(1, kStack, {0x401000, 0x402000}, agent::PythonDefines, kOuter, outer); // defines both stacks
        w.alloc(2, kStack, {}, agent::PythonByHash, kOuter, {});                       // names both
        w.alloc(3, kStack, {}, agent::PythonInline, 0, inner);                         // whole, no name
        w.alloc(4, kStack, {}, agent::PythonDefines, kInner, inner);                   // defines another
        w.alloc(5, kStack, {}, agent::PythonByHash, kInner, {});
        w.alloc(6, kStack, {}, agent::PythonByHash, kOuter, {});
        w.alloc(7, kStack, {}, agent::PythonByHash, kNever, {}); // a hash the ring never defined
        h->head.store(w.at);

        RingReader rings(dir.path().toStdString());
        PythonSink sink;
        QCOMPARE(rings.poll(RingSinks{.memory = &sink}, UINT64_MAX / 4), size_t(7));
        QCOMPARE(sink.sizes, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7}));
        QVERIFY(same(sink.python[0], outer));
        QVERIFY(same(sink.python[1], outer));
        QVERIFY(same(sink.python[2], inner));
        QVERIFY(same(sink.python[3], inner));
        QVERIFY(same(sink.python[4], inner));
        QVERIFY(same(sink.python[5], outer));
        QVERIFY(sink.python[6].empty());
        // The native stack of each record is the one its own hash named, whatever its Python frames' form.
        for (const std::vector<uint64_t> &pcs : sink.stacks)
            QCOMPARE(pcs, (std::vector<uint64_t>{0x401000, 0x402000}));
        QCOMPARE(rings.counters().pythonStackRefs, uint64_t(4));
        QCOMPARE(rings.counters().unknownPythonStackRefs, uint64_t(1));
        ::munmap(mem, agent::kRingHeaderBytes + kDataBytes);
    }
};

QTEST_GUILESS_MAIN(TestRingPythonStacks)
#include "tst_ring_python_stacks.moc"
