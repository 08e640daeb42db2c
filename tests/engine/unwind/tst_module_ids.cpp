// Module ids stay the same for the same file at the same place: across /proc/PID/maps reloads, in a forked
// child, and in the recorder's and exporter's location keys, which must not mix up modules whatever the
// address. Runs on the test process and forked children of it: no privileges needed.
#include "engine/recorder/recorder.h"
#include "engine/session/sampling_pipeline.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"

#include <QTest>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

using namespace emberline::engine;

namespace {

// A forked copy of this process, parked until it is killed: its map is ours, as a FORK record says.
class ForkedChild {
public:
    ForkedChild()
    {
        m_pid = ::fork();
        if (m_pid == 0) {
            for (;;)
                ::pause();
        }
    }
    ~ForkedChild()
    {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
    }
    int pid() const { return m_pid; }

private:
    int m_pid = -1;
};

std::map<uint64_t, uint32_t> idsByStart(const ProcessMap &map)
{
    std::map<uint64_t, uint32_t> ids;
    for (const auto &[start, module] : map.modules())
        ids[start] = module.id;
    return ids;
}

} // namespace

class TestModuleIds : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, reading /proc/PID/maps again hands out new ids for the same mappings: every reload grows the
    // recorder's module and location tables and splits one function's samples over several locations.
    void reloadKeepsIds()
    {
        ForkedChild child;
        QVERIFY(child.pid() > 0);
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        QVERIFY(map.loadFromProc(child.pid()));
        const auto first = idsByStart(map);
        QVERIFY(!first.empty());
        const size_t known = ids.size();
        for (int i = 0; i < 3; ++i)
            QVERIFY(map.loadFromProc(child.pid()));
        QCOMPARE(idsByStart(map), first);
        // A second map of the same process (a pipeline that met the pid again) agrees too.
        ProcessMap again(&cache, &ids);
        QVERIFY(again.loadFromProc(child.pid()));
        QCOMPARE(idsByStart(again), first);
        QCOMPARE(ids.size(), known);
    }

    // If this fails, a forked child's samples land on other module ids than its parent's for the same code.
    void forkedChildHasParentsIds()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap parent(&cache, &ids);
        QVERIFY(parent.loadFromProc(::getpid()));
        ForkedChild child;
        QVERIFY(child.pid() > 0);
        ProcessMap forked(&cache, &ids);
        QVERIFY(forked.loadFromProc(child.pid()));
        const auto parentIds = idsByStart(parent);
        const auto childIds = idsByStart(forked);
        // This test's code and libc's are mapped in both, at the same place.
        const auto code = reinterpret_cast<uint64_t>(&idsByStart);
        const auto libc = reinterpret_cast<uint64_t>(&std::printf);
        for (uint64_t address : {code, libc}) {
            const MappedModule *p = parent.find(address);
            const MappedModule *c = forked.find(address);
            QVERIFY(p && c);
            QCOMPARE(c->id, p->id);
        }
        size_t same = 0;
        for (const auto &[start, id] : childIds)
            same += parentIds.count(start) && parentIds.at(start) == id;
        QVERIFY2(same + 2 >= childIds.size(),
                 qPrintable(QStringLiteral("%1 of %2 mappings kept their id").arg(same).arg(childIds.size())));
    }

    // The pipeline's own path: a FORK record copies the parent's map; the ids and the count of known modules do
    // not change, and neither do they when the child's map is then read from /proc.
    void pipelineForkAndReload()
    {
        Recorder recorder;
        SamplingPipeline pipeline(recorder);
        ForkedChild child;
        QVERIFY(child.pid() > 0);
        const auto self = static_cast<uint32_t>(::getpid());
        const auto code = reinterpret_cast<uint64_t>(&idsByStart);
        const uint32_t parentId = pipeline.moduleIdAt(self, code);
        QVERIFY(parentId >= kFirstModuleId);
        const size_t known = pipeline.modulesKnown();
        pipeline.onFork(static_cast<uint32_t>(child.pid()), self, static_cast<uint32_t>(child.pid()));
        QCOMPARE(pipeline.moduleIdAt(static_cast<uint32_t>(child.pid()), code), parentId);
        QCOMPARE(pipeline.modulesKnown(), known);
        pipeline.primeProcess(child.pid()); // reads nothing new: the map exists already
        QCOMPARE(pipeline.moduleIdAt(static_cast<uint32_t>(child.pid()), code), parentId);
    }

    // The identity: another inode or build id, another load address or offset is another module.
    void identityDecides()
    {
        ModuleIds ids(kFirstModuleId);
        ModuleIdentity a{"/usr/lib/libfoo.so", "ab12", 1, 100, 0x7f0000000000, 0x1000};
        const uint32_t id = ids.idFor(a);
        QCOMPARE(ids.idFor(a), id);
        ModuleIdentity replaced = a;
        replaced.inode = 101;
        ModuleIdentity rebuilt = a;
        rebuilt.buildId = "cd34";
        ModuleIdentity moved = a;
        moved.start = 0x7f1000000000;
        ModuleIdentity otherSegment = a;
        otherSegment.pgoff = 0x2000;
        QVERIFY(ids.idFor(replaced) != id);
        QVERIFY(ids.idFor(rebuilt) != id);
        QVERIFY(ids.idFor(moved) != id);
        QVERIFY(ids.idFor(otherSegment) != id);
        QCOMPARE(ids.size(), size_t(5));
    }

    // If this fails, the location key mixes module ids and addresses: kernel addresses (above 48 bits) or module
    // ids past 16 bits make two locations one (the wrong name in the symbol cache), or one location many (a
    // recorder table that grows with every sample).
    void locationKeysNeverCollide()
    {
        Recorder recorder;
        const uint64_t kernel = 0xffffffff81000000ull;
        // Under a (module << 48) ^ address key these pairs were equal.
        const uint32_t a = recorder.internLocation(kKernelSymbolsModule, kernel);
        const uint32_t b = recorder.internLocation(kKernelSymbolsModule + 1, kernel ^ (uint64_t(3) << 48));
        const uint32_t c = recorder.internLocation(kFirstModuleId, 0x401000);
        const uint32_t d = recorder.internLocation(kFirstModuleId + 65536, 0x401000);
        QCOMPARE(std::set<uint32_t>({a, b, c, d}).size(), size_t(4));
        for (int i = 0; i < 1000; ++i) {
            QCOMPARE(recorder.internLocation(kKernelSymbolsModule, kernel), a);
            QCOMPARE(recorder.internLocation(kKernelSymbolsModule + 1, kernel ^ (uint64_t(3) << 48)), b);
            QCOMPARE(recorder.internLocation(kFirstModuleId + 65536, 0x401000), d);
        }
        QCOMPARE(recorder.locationsInterned(), size_t(4));
        QCOMPARE(recorder.locationModule(d), kFirstModuleId + 65536);
        QCOMPARE(LocationKeyHash{}(LocationKey{kFirstModuleId, 0x401000}) ==
                     LocationKeyHash{}(LocationKey{kFirstModuleId + 65536, 0x401000}),
                 false);
    }
};

QTEST_GUILESS_MAIN(TestModuleIds)
#include "tst_module_ids.moc"
