// The unwind table server (engine/unwind/unwind_table_server.h) on real processes: /bin/sleep with the built agent
// preloaded, and a ring of the test's own (a RingHeader at the start of a shared file) standing for the one the agent
// made. The index it writes must be what the agent's walk needs: sorted, every executable file mapping (the agent
// library too) at its load bias, each table whole in the arena below arenaBytes, a libc function's row found at its
// address in that process; re-indexed when the agent counts a dlopen; the tables shared by a second process, not
// built again; a removed ring never touched again; a full or missing agent folder an error, never a crash.
#include "engine/agent/agent_protocol.h"
#include "engine/agent/agent_unwind.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwind_table_server.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace emberline::engine;
using namespace emberline::agent;

namespace {

constexpr int kWaitMs = 20'000;

QString agentLibrary()
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/lib/emberline/libemberline_agent.so");
}

bool waitFor(const std::function<bool()> &done, int timeoutMs = kWaitMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        usleep(2000);
    }
    return true;
}

// A ring as the session maps it: a shared, writable mapping of a file of kRingHeaderBytes (no data: the server
// only writes the index), all zero (mapsChanges 0). In memory (memfd), or a file at `path`.
struct TestRing {
    int fd = -1;
    RingHeader *ring = nullptr;

    explicit TestRing(const std::string &path = {})
    {
        fd = path.empty() ? memfd_create("ring", MFD_CLOEXEC) : open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || ftruncate(fd, off_t(kRingHeaderBytes)) != 0)
            return;
        // The header's page gets its storage now (the agent reserves every header page of a real ring): a read of
        // a hole on a full tmpfs could fault.
        const std::vector<char> page(4096, 0);
        if (pwrite(fd, page.data(), page.size(), 0) != ssize_t(page.size()))
            return;
        void *memory = mmap(nullptr, kRingHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (memory != MAP_FAILED)
            ring = static_cast<RingHeader *>(memory);
    }
    ~TestRing()
    {
        if (ring)
            munmap(ring, kRingHeaderBytes);
        if (fd >= 0)
            close(fd);
    }
    ModuleIndex &index() const { return *moduleIndex(ring); }
};

// The index as the agent reads it: a copy taken while the sequence was even and did not move.
struct IndexCopy {
    uint32_t sequence = 0;
    uint64_t arenaBytes = 0;
    uint64_t mapsChanges = 0;
    std::vector<ModuleEntry> entries;

    const ModuleEntry *find(uint64_t address) const
    {
        for (const ModuleEntry &e : entries)
            if (address >= e.start && address < e.end)
                return &e;
        return nullptr;
    }
};

bool readIndex(const TestRing &ring, IndexCopy &copy)
{
    ModuleIndex &index = ring.index();
    const uint32_t before = index.sequence.load(std::memory_order_acquire);
    if (before & 1u)
        return false;
    copy.sequence = before;
    copy.arenaBytes = index.arenaBytes;
    copy.mapsChanges = index.mapsChanges;
    copy.entries.assign(index.entries, index.entries + std::min(index.count, kModuleSlots));
    std::atomic_thread_fence(std::memory_order_acquire);
    return index.sequence.load(std::memory_order_relaxed) == before;
}

// An index newer than `sequence` (even, whole, with at least one entry).
bool waitForIndex(const TestRing &ring, IndexCopy &copy, uint32_t after = 0)
{
    return waitFor([&] { return readIndex(ring, copy) && copy.sequence > after && !copy.entries.empty(); });
}

// /bin/sleep with the agent preloaded, once the dynamic loader has mapped libc and the agent (the server reads the
// maps once per round: a process caught before that would be indexed without them).
struct Sleeper {
    QTemporaryDir agentDir;
    QProcess process;

    Sleeper()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LD_PRELOAD"), agentLibrary());
        env.insert(QString::fromLatin1(kEnvDirectory), agentDir.path());
        process.setProcessEnvironment(env);
        process.start(QStringLiteral("/bin/sleep"), {QStringLiteral("60")});
        if (!process.waitForStarted())
            return;
        const QString maps = QStringLiteral("/proc/%1/maps").arg(process.processId());
        waitFor([&] {
            QFile file(maps);
            const QByteArray text = file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
            return text.contains(kLibraryName) && text.contains("/libc.so");
        });
    }
    ~Sleeper()
    {
        process.kill();
        process.waitForFinished();
    }
    uint32_t pid() const { return uint32_t(process.processId()); }
};

// The modules of a process, as the server reads them.
struct Modules {
    ElfCache elfs;
    ModuleIds ids{1};
    ProcessMap map{&elfs, &ids};

    explicit Modules(uint32_t pid) { (void)map.loadFromProc(int(pid)); }
    const MappedModule *named(const char *fileName) const
    {
        for (const auto &[start, m] : map.modules())
            if (m.path.ends_with(std::string("/") + fileName))
                return &m;
        return nullptr;
    }
};

// The arena as the agent maps it (read-only, shared), `bytes` of it.
struct ArenaView {
    void *memory = MAP_FAILED;
    uint64_t bytes = 0;

    ArenaView(const std::string &path, uint64_t size) : bytes(size)
    {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && size > 0)
            memory = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
        if (fd >= 0)
            close(fd);
    }
    ~ArenaView()
    {
        if (memory != MAP_FAILED)
            munmap(memory, bytes);
    }
    bool table(uint64_t offset, UnwindTable &table) const
    {
        return memory != MAP_FAILED && offset < bytes && offset % 8 == 0 &&
               unwindTableFromBytes(static_cast<const uint8_t *>(memory) + offset, bytes - offset, table);
    }
};

struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
};

uint64_t fileSize(const std::string &path)
{
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// What the agent's walk relies on in any index: sorted, not overlapping, every table whole below arenaBytes, which
// the arena file holds.
void checkIndex(const IndexCopy &index, const std::string &arenaPath)
{
    QVERIFY(index.arenaBytes <= fileSize(arenaPath));
    const ArenaView arena(arenaPath, index.arenaBytes);
    for (size_t i = 0; i < index.entries.size(); ++i) {
        const ModuleEntry &e = index.entries[i];
        QVERIFY2(e.start < e.end, qPrintable(QString::number(i)));
        if (i > 0)
            QVERIFY2(index.entries[i - 1].end <= e.start, qPrintable(QString::number(i)));
        UnwindTable table;
        QVERIFY2(arena.table(e.tableOffset, table), qPrintable(QString::number(e.tableOffset)));
        QVERIFY(table.count >= 1);
        QVERIFY(e.end - e.bias <= (uint64_t(1) << 32));
    }
}

} // namespace

class TstUnwindTableServer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void indexesARunningProcess();
    void removedRingIsNeverTouched();
    void endedProcessIsNoError();
    void missingAgentFolder();
    void fullFileSystem();

private: // NOLINT(readability-redundant-access-specifiers): Q_SLOTS marks the section above for moc
    uint64_t m_writeOffset = 0; // libc's write, from libc's load bias (the same in every process)
    std::string m_libcName;
};

void TstUnwindTableServer::initTestCase()
{
    QVERIFY2(QFile::exists(agentLibrary()), qPrintable(agentLibrary()));
    // libc's own write (an ASan build's `write` is its interceptor), and where libc lies in this process.
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    QVERIFY(libc);
    const auto write = reinterpret_cast<uint64_t>(dlsym(libc, "write"));
    QVERIFY(write);
    Modules self{uint32_t(getpid())};
    const MappedModule *module = self.map.find(write);
    QVERIFY(module && module->path.find("/libc.so") != std::string::npos);
    m_writeOffset = write - uint64_t(module->bias);
    m_libcName = module->path.substr(module->path.rfind('/') + 1);
}

void TstUnwindTableServer::indexesARunningProcess()
{
    QTemporaryDir folder;
    UnwindTableServer server(folder.path().toStdString());
    QVERIFY2(server.stats().firstError.empty(), server.stats().firstError.c_str());
    Sleeper sleeper;
    TestRing ring;
    QVERIFY(ring.ring && sleeper.pid());
    server.addImage(1, sleeper.pid(), ring.ring, ring.fd);
    IndexCopy index;
    QVERIFY2(waitForIndex(ring, index), "no index within 20 s");
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    checkIndex(index, server.arenaPath());
    QCOMPARE(index.mapsChanges, uint64_t(0));

    // Every executable file mapping is there, the agent's own library and the program too, at its load bias.
    const Modules modules(sleeper.pid());
    for (const char *name : {kLibraryName, m_libcName.c_str(), "sleep"}) {
        const MappedModule *m = modules.named(name);
        QVERIFY2(m, name);
        const ModuleEntry *e = index.find(m->start);
        QVERIFY2(e && e->start == m->start && e->end == m->end && e->bias == uint64_t(m->bias), name);
    }
    // The libc function at its address in that process has a row the walk follows.
    const MappedModule *libc = modules.named(m_libcName.c_str());
    QVERIFY(libc);
    const uint64_t write = m_writeOffset + uint64_t(libc->bias);
    const ModuleEntry *entry = index.find(write);
    QVERIFY(entry);
    {
        const ArenaView arena(server.arenaPath(), index.arenaBytes);
        UnwindTable table;
        QVERIFY(arena.table(entry->tableOffset, table));
        const UnwindRow *row = findUnwindRow(table, write - entry->bias);
        QVERIFY(row);
        QVERIFY2(!isFallback(row->kind) && row->kind != UnwindKind::End, qPrintable(QString::number(int(row->kind))));
    }

    UnwindServerStats stats = server.stats();
    QVERIFY2(stats.firstError.empty(), stats.firstError.c_str());
    QVERIFY(stats.tablesBuilt >= 3);
    QCOMPARE(stats.arenaBytes, index.arenaBytes);
    QCOMPARE(stats.imagesIndexed, uint64_t(1));
    QCOMPARE(stats.modulesIndexed, uint64_t(index.entries.size()));
    QCOMPARE(stats.modulesLeftOut, uint64_t(0));
    for (const UnwindModuleStats &m : stats.modules) {
        qInfo("%s: %llu bytes at %llu, %.1f%% covered, %.1f ms", m.path.c_str(),
              static_cast<unsigned long long>(m.tableBytes), static_cast<unsigned long long>(m.arenaOffset),
              100.0 * m.table.coveredShare(), double(m.buildNs) / 1e6);
        QVERIFY2(m.error.empty(), m.error.c_str());
    }

    // Nothing changed: a poll queues nothing.
    server.poll();
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(server.stats().indexWrites, stats.indexWrites);
    // The agent counted a dlopen: the next poll indexes again, and the index says it follows the count.
    ring.ring->mapsChanges.store(1, std::memory_order_release);
    server.poll();
    IndexCopy again;
    QVERIFY(
        waitFor([&] { return readIndex(ring, again) && again.sequence > index.sequence && again.mapsChanges == 1; }));
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(again.entries.size(), index.entries.size());
    QCOMPARE(server.stats().indexWrites, stats.indexWrites + 1);
    // A walk met a pc in no tabled module: the maps are read again, though no dlopen was counted.
    ring.ring->moduleMissedNs.store(12345, std::memory_order_relaxed);
    server.poll();
    IndexCopy third;
    QVERIFY(waitFor([&] { return readIndex(ring, third) && third.sequence > again.sequence; }));
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(server.stats().indexWrites, stats.indexWrites + 2);
    // Once served, the same stamp queues nothing.
    server.poll();
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(server.stats().indexWrites, stats.indexWrites + 2);
    QCOMPARE(server.stats().tablesBuilt, stats.tablesBuilt); // nothing built again

    // A second process of the same program: its tables are the first one's, neither built nor written again.
    Sleeper second;
    TestRing secondRing;
    server.addImage(2, second.pid(), secondRing.ring, secondRing.fd);
    IndexCopy secondIndex;
    QVERIFY(waitForIndex(secondRing, secondIndex));
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    checkIndex(secondIndex, server.arenaPath());
    const Modules secondModules(second.pid());
    const ModuleEntry *secondLibc = secondIndex.find(secondModules.named(m_libcName.c_str())->start);
    QVERIFY(secondLibc);
    QCOMPARE(secondLibc->tableOffset, entry->tableOffset);
    const UnwindServerStats after = server.stats();
    QCOMPARE(after.tablesBuilt, stats.tablesBuilt);
    QCOMPARE(after.arenaBytes, stats.arenaBytes);
    QCOMPARE(after.imagesIndexed, uint64_t(2));

    server.removeImage(1);
    server.removeImage(2);
    QCOMPARE(server.stats().imagesIndexed, uint64_t(0));
    // A ring removed is never queued again, whatever its counter says.
    ring.ring->mapsChanges.store(4, std::memory_order_release);
    server.poll();
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(server.stats().indexWrites, after.indexWrites);
}

// removeImage while the worker builds the image's tables (a fresh server: it has built the first and goes on with
// the others, libc's ~10 ms among them): the ring is made inaccessible at once, so that any later write by the worker
// would crash the test, and the round stops at the next module.
void TstUnwindTableServer::removedRingIsNeverTouched()
{
    QTemporaryDir folder;
    Sleeper sleeper;
    TestRing ring;
    QVERIFY(ring.ring);
    {
        UnwindTableServer server(folder.path().toStdString());
        server.addImage(7, sleeper.pid(), ring.ring, ring.fd);
        QVERIFY(waitFor([&] { return server.stats().tablesBuilt >= 1; }));
        server.removeImage(7);
        QCOMPARE(mprotect(ring.ring, kRingHeaderBytes, PROT_NONE), 0);
        const UnwindServerStats removed = server.stats();
        QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
        const UnwindServerStats idle = server.stats();
        QCOMPARE(idle.indexWrites, removed.indexWrites);
        QVERIFY(idle.tablesBuilt <= removed.tablesBuilt + 1);
        QCOMPARE(idle.imagesIndexed, uint64_t(0));
        qInfo("removed after %llu tables (%s), %llu built in all", static_cast<unsigned long long>(removed.tablesBuilt),
              removed.indexWrites == 0 ? "before its index" : "after its index",
              static_cast<unsigned long long>(idle.tablesBuilt));
    }
    QCOMPARE(mprotect(ring.ring, kRingHeaderBytes, PROT_READ | PROT_WRITE), 0);

    // A server destroyed while it builds stops after the table under way.
    QElapsedTimer timer;
    timer.start();
    {
        UnwindTableServer server(folder.path().toStdString());
        server.addImage(8, sleeper.pid(), ring.ring, ring.fd);
    }
    QVERIFY2(timer.elapsed() < 10'000, qPrintable(QString::number(timer.elapsed())));
}

// A process that has ended before its round (its maps are gone): nothing is written, and nothing is an error.
void TstUnwindTableServer::endedProcessIsNoError()
{
    const pid_t child = fork();
    if (child == 0)
        _exit(0);
    QVERIFY(child > 0);
    QCOMPARE(waitpid(child, nullptr, 0), child);
    QTemporaryDir folder;
    UnwindTableServer server(folder.path().toStdString());
    TestRing ring;
    server.addImage(1, uint32_t(child), ring.ring, ring.fd);
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    const UnwindServerStats stats = server.stats();
    QCOMPARE(stats.indexWrites, uint64_t(0));
    QCOMPARE(stats.tablesFailed, uint64_t(0));
    QVERIFY2(stats.firstError.empty(), stats.firstError.c_str());
    QCOMPARE(ring.index().sequence.load(), 0u);
}

// An agent folder the arena cannot be made in: said once, no table built for nothing, no index.
void TstUnwindTableServer::missingAgentFolder()
{
    UnwindTableServer server("/nonexistent-emberline-folder/agent");
    QVERIFY(server.stats().arenaStopped);
    QVERIFY2(server.stats().firstError.find("/nonexistent-emberline-folder/agent") != std::string::npos,
             server.stats().firstError.c_str());
    Sleeper sleeper;
    TestRing ring;
    server.addImage(1, sleeper.pid(), ring.ring, ring.fd);
    server.poll();
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    QCOMPARE(server.stats().indexWrites, uint64_t(0));
    QCOMPARE(server.stats().tablesBuilt, uint64_t(0));
    QCOMPARE(ring.index().sequence.load(), 0u);
}

// The agent folder on a tmpfs that is full: a ring there cannot have its index reserved (an error, not a SIGBUS),
// and with a little room the arena takes the tables that fit, stops at the first that does not, gives back what
// that write took and says why; the index names only what was written.
void TstUnwindTableServer::fullFileSystem()
{
    if (geteuid() != 0)
        QSKIP("mounting a small tmpfs needs root");
    // A mount namespace of the test's own, so that nothing of this mount is seen outside it.
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        QSKIP(qPrintable(
            QStringLiteral("no mount namespace of its own: %1").arg(QString::fromLocal8Bit(strerror(errno)))));
    QTemporaryDir mountPoint;
    const std::string folder = mountPoint.path().toStdString();
    QVERIFY2(mount("emberline-test", folder.c_str(), "tmpfs", 0, "size=1m") == 0, strerror(errno));
    const Unmount unmount{folder};
    auto ring = std::make_unique<TestRing>(folder + "/ring");
    QVERIFY(ring->ring);
    // Fill it.
    const std::string filler = folder + "/filler";
    const int fd = open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    QVERIFY(fd >= 0);
    const std::vector<char> chunk(4096, 'x');
    uint64_t filled = 0;
    while (write(fd, chunk.data(), chunk.size()) == ssize_t(chunk.size()))
        filled += chunk.size();
    QCOMPARE(errno, ENOSPC);

    Sleeper sleeper;
    {
        UnwindTableServer server(folder);
        QVERIFY2(server.stats().firstError.empty(), server.stats().firstError.c_str()); // an empty file takes no room
        server.addImage(1, sleeper.pid(), ring->ring, ring->fd);
        QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
        const UnwindServerStats stats = server.stats();
        QVERIFY2(stats.firstError.find("module index") != std::string::npos &&
                     stats.firstError.find(strerror(ENOSPC)) != std::string::npos,
                 stats.firstError.c_str());
        QCOMPARE(stats.indexWrites, uint64_t(0));
    }
    ring.reset();

    // Room for small tables, not for libc's.
    QCOMPARE(ftruncate(fd, off_t(filled - uint64_t(48) * 1024)), 0);
    close(fd);
    TestRing memoryRing;
    UnwindTableServer server(folder);
    server.addImage(1, sleeper.pid(), memoryRing.ring, memoryRing.fd);
    QVERIFY(server.waitIdle(std::chrono::milliseconds(kWaitMs)));
    const UnwindServerStats stats = server.stats();
    QVERIFY(stats.arenaStopped);
    QVERIFY2(stats.firstError.find(strerror(ENOSPC)) != std::string::npos, stats.firstError.c_str());
    QCOMPARE(fileSize(server.arenaPath()), stats.arenaBytes); // the failed write's bytes given back
    IndexCopy index;
    if (readIndex(memoryRing, index) && index.sequence != 0) {
        QCOMPARE(index.arenaBytes, stats.arenaBytes);
        checkIndex(index, server.arenaPath());
        QCOMPARE(stats.modulesIndexed, uint64_t(index.entries.size()));
        QVERIFY(stats.modulesLeftOut >= 1);
    }
    qInfo("with 48 KiB free: %llu tables built, %llu bytes written; %s",
          static_cast<unsigned long long>(stats.tablesBuilt), static_cast<unsigned long long>(stats.arenaBytes),
          stats.firstError.c_str());
}

QTEST_GUILESS_MAIN(TstUnwindTableServer)
#include "tst_unwind_table_server.moc"
