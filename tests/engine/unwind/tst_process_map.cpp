// The process map's lookups on the test process's own memory map, against the plain walks they replaced: the
// module at every edge of every mapping, and the file bytes behind every segment of every mapped image (where
// libunwind reads unwind tables). Then a real unwind of the test's own stack: libunwind's signal-mask system calls
// are skipped, and the thread's signal mask is what it was. No privileges needed.
#include "tests/engine/session/own_stack.h"

#include "engine/recorder/recorder.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/libunwind_signals.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwinder.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

// ProcessMap::find as it was: the last module starting at or below the address, if it holds it.
const MappedModule *findByWalk(const ProcessMap &map, uint64_t address)
{
    const MappedModule *found = nullptr;
    for (const auto &[start, m] : map.modules()) {
        if (start <= address && address < m.end)
            found = &m;
    }
    return found;
}

// ProcessMap::readImage as it was: the module holding the address, then every image in module order.
bool readByWalk(const ProcessMap &map, uint64_t address, void *out, size_t size)
{
    if (const MappedModule *m = findByWalk(map, address);
        m && m->image && m->image->readVaddr(address - static_cast<uint64_t>(m->bias), out, size))
        return true;
    const ElfImage *last = nullptr;
    for (const auto &[start, m] : map.modules()) {
        if (!m.image || m.image.get() == last)
            continue;
        last = m.image.get();
        if (m.image->readVaddr(address - static_cast<uint64_t>(m.bias), out, size))
            return true;
    }
    return false;
}

__attribute__((noinline)) OwnSample deeperFrame(int depth)
{
    OwnSample s = depth > 0 ? deeperFrame(depth - 1) : captureOwnStack();
    asm volatile("" ::: "memory"); // keeps the call from becoming a tail call
    return s;
}

} // namespace

class TestProcessMap : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, the sorted index gives a pc another module than the map holds it in: frames are attributed
    // to the wrong library, or libunwind is handed the wrong unwind table.
    void findAgreesWithTheMap()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        QVERIFY(map.loadFromProc(getpid()));
        QVERIFY(map.modules().size() > 3);
        for (const auto &[start, m] : map.modules()) {
            for (uint64_t address : {start - 1, start, start + 1, (start + m.end) / 2, m.end - 1, m.end})
                QCOMPARE(map.find(address), findByWalk(map, address));
        }
        QCOMPARE(map.find(0), nullptr);
        QCOMPARE(map.find(UINT64_MAX), nullptr);
    }

    // If this fails, libunwind reads other bytes through the index than the file holds at that address: unwind
    // tables and CFI come out wrong, and stacks are cut or wrong. Probed at both edges of every segment of every
    // image, across segment ends, and through each image's unwind table.
    void imageReadsAgreeWithTheFiles()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        QVERIFY(map.loadFromProc(getpid()));
        size_t probes = 0;
        size_t hits = 0;
        for (const auto &[start, m] : map.modules()) {
            if (!m.image)
                continue;
            const auto bias = static_cast<uint64_t>(m.bias);
            std::vector<uint64_t> addresses;
            for (const ElfImage::Segment &s : m.image->segments()) {
                const uint64_t a = s.vaddr + bias;
                const uint64_t b = a + s.filesz;
                for (uint64_t address :
                     {a - 8, a - 1, a, a + 1, a + s.filesz / 3, b - 9, b - 8, b - 5, b - 4, b - 1, b})
                    addresses.push_back(address);
            }
            for (uint64_t i = 0; i < m.image->fdeCount(); i += 97)
                addresses.push_back(m.image->fdeTableVaddr() + bias + i * 8);
            for (uint64_t address : addresses) {
                for (size_t size : {size_t(1), size_t(4), size_t(8)}) {
                    uint64_t viaIndex = 0;
                    uint64_t viaWalk = 0;
                    const bool indexed = map.readImage(address, &viaIndex, size);
                    const bool walked = readByWalk(map, address, &viaWalk, size);
                    QVERIFY2(indexed == walked, qPrintable(QStringLiteral("%1 at 0x%2 (%3 bytes): index %4, walk %5")
                                                               .arg(QString::fromStdString(m.path))
                                                               .arg(address, 0, 16)
                                                               .arg(size)
                                                               .arg(indexed)
                                                               .arg(walked)));
                    QCOMPARE(viaIndex, viaWalk);
                    ++probes;
                    hits += indexed;
                }
            }
        }
        QVERIFY(hits > 100);
        QVERIFY(hits < probes);
    }

    // If this fails, a read just below an image's first segment (an address of another image, less this one's bias)
    // wraps around and is answered with bytes from before the mapped file: garbage, or a crash.
    void readsBelowAnImageFail()
    {
        auto image = ElfImage::open("/proc/self/exe");
        QVERIFY(image.ok());
        uint64_t out = 0;
        QVERIFY(!image.value()->readVaddr(UINT64_MAX - 7, &out, 8));
        QVERIFY(!image.value()->readVaddr(UINT64_MAX, &out, 1));
        const ElfImage::Segment &first = image.value()->segments().front();
        QVERIFY(image.value()->readVaddr(first.vaddr, &out, 8));
        QVERIFY(!image.value()->readVaddr(first.vaddr + first.filesz - 7, &out, 8));
    }

    // If this fails, the code of a program linked by lld gets a wrong load bias: lld packs the read-only segment
    // and the code into one file page, and the executable mapping was matched to the read-only segment, a page
    // off, so that unwinding and symbolization read the wrong bytes.
    void lldPackedSegmentsGetTheirBias()
    {
        const std::string path = EMBERLINE_BINARY_DIR "/tests/targets/cpu_split_lld";
        auto image = ElfImage::open(path);
        QVERIFY2(image, path.c_str());
        const auto &segments = image.value()->segments();
        const auto code = std::find_if(segments.begin(), segments.end(), [](const auto &s) { return s.executable; });
        QVERIFY(code != segments.end() && code != segments.begin());
        const auto before = std::prev(code);
        const uint64_t codePage = code->offset & ~uint64_t(0xfff);
        QVERIFY2(codePage < before->offset + before->filesz,
                 "the layout this test is about: one file page, two segments");

        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        const uint64_t base = 0x555555554000;
        const uint64_t start = base + (code->vaddr & ~uint64_t(0xfff));
        map.addMapping(base, before->offset + before->filesz, 0, path, false);
        map.addMapping(start, code->filesz + (code->offset - codePage), codePage, path, true);
        const MappedModule *m = map.find(base + code->vaddr);
        QVERIFY(m);
        QCOMPARE(m->bias, static_cast<int64_t>(base));
        // The bytes read at a runtime address are the file's bytes of the code there.
        uint64_t fromMap = 0;
        uint64_t fromFile = 0;
        QVERIFY(map.readImage(base + code->vaddr + 16, &fromMap, sizeof fromMap));
        QVERIFY(image.value()->readVaddr(code->vaddr + 16, &fromFile, sizeof fromFile));
        QCOMPARE(fromMap, fromFile);
    }

    // If this fails, a program replaced on disk during a session (rebuilt and run again) is read from the file
    // that was there before: a mapping's inode (from /proc or a perf MMAP2 record) names the file the process
    // mapped, and the cache reopens the path when it holds another. Without the inode the old file is kept.
    void aFileReplacedOnDiskIsReopened()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("program"));
        const QString targets = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/");
        QVERIFY(QFile::copy(targets + QStringLiteral("cpu_split_lld"), path));
        const auto inodeOf = [&] {
            struct stat st {};
            return ::stat(path.toLocal8Bit().constData(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
        };
        const uint64_t before = inodeOf();
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        map.addMapping(0x100000, 0x10000, 0, path.toStdString(), true, before);
        const MappedModule *first = map.find(0x100000);
        QVERIFY(first && first->image);
        const std::string firstBuildId = first->image->buildId();

        // Rebuilt: another file renamed over the path.
        const QString next = dir.filePath(QStringLiteral("program.new"));
        QVERIFY(QFile::copy(targets + QStringLiteral("cpu_split_nofp"), next));
        QVERIFY(::rename(next.toLocal8Bit().constData(), path.toLocal8Bit().constData()) == 0);
        const uint64_t after = inodeOf();
        QVERIFY(after != before);

        map.addMapping(0x300000, 0x10000, 0, path.toStdString(), true, 0); // no inode: the cached file
        QCOMPARE(map.find(0x300000)->image->buildId(), firstBuildId);
        map.addMapping(0x200000, 0x10000, 0, path.toStdString(), true, after);
        const MappedModule *second = map.find(0x200000);
        QVERIFY(second && second->image);
        QCOMPARE(second->image->inode(), after);
        QVERIFY(second->image->buildId() != firstBuildId);
    }

    // Executable memory that no file backs (perf names a JIT's "//anon"; a memfd; a file the program runs that was
    // deleted since) is told apart: only the deleted file is said to be missing on disk. If this fails, every run of
    // node or a JVM reports "//anon: deleted or replaced on disk while the program ran".
    void onlyFilesGoneFromDiskAreMissing()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        map.addMapping(0x10000, 0x1000, 0, "//anon", true);
        map.addMapping(0x20000, 0x1000, 0, "/memfd:jit (deleted)", true);
        map.addMapping(0x30000, 0x1000, 0, "/nonexistent/libx.so (deleted)", true);
        map.addMapping(0x40000, 0x1000, 0, "/nonexistent/liby.so", true);
        QVERIFY(map.find(0x10000) && !map.find(0x10000)->fileMissing && !map.find(0x10000)->image);
        QVERIFY(map.find(0x20000) && !map.find(0x20000)->fileMissing);
        QVERIFY(map.find(0x30000) && map.find(0x30000)->fileMissing);
        QVERIFY(map.find(0x40000) && map.find(0x40000)->fileMissing);
    }

    // If this fails, a mapping of data (which never holds code) makes the unwinder flush libunwind's cache, as every
    // heap or arena mmap of the target would; or a module that comes or goes does not.
    void onlyModulesChangeTheGeneration()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        map.addMapping(0x10000, 0x1000, 0, "/nonexistent/libx.so", true);
        const uint64_t g = map.generation();
        map.addMapping(0x40000, 0x1000, 0, "", false); // data, overlapping nothing
        QCOMPARE(map.generation(), g);
        map.addMapping(0x10000, 0x1000, 0, "", false); // data over the module: it is gone
        QVERIFY(map.generation() != g);
        QCOMPARE(map.find(0x10000), nullptr);
    }

    // If this fails, libunwind still makes a sigprocmask system call per unwinding step (a third of the profiler's
    // CPU at 999 Hz), or skipping them changed the thread's signal mask or the stack unwound.
    void unwindingSkipsSignalMaskCalls()
    {
        sigset_t blockedBefore;
        sigemptyset(&blockedBefore);
        sigaddset(&blockedBefore, SIGUSR2);
        QCOMPARE(pthread_sigmask(SIG_BLOCK, &blockedBefore, nullptr), 0);
        sigset_t maskBefore;
        QCOMPARE(pthread_sigmask(SIG_SETMASK, nullptr, &maskBefore), 0);

        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        QVERIFY(map.loadFromProc(getpid()));
        // libunwind's own walk (the tables' walk calls nothing that blocks signals).
        UnwinderOptions libunwindAlone;
        libunwindAlone.tables = false;
        Unwinder unwinder(libunwindAlone);
        const OwnSample sample = deeperFrame(8);
        const unsigned long long skippedBefore = libunwindSignalMasksSkipped();
        UnwindOutput out;
        for (int i = 0; i < 3; ++i) {
            const RawSample raw = sample.view();
            unwinder.unwind(UnwindInput{raw.regs, raw.stack, &map, getpid()}, out);
        }
        QVERIFY2(out.ips.size() >= 10, qPrintable(QString::number(out.ips.size())));
        if (libunwindSignalMasksCanBeSkipped())
            QVERIFY(libunwindSignalMasksSkipped() > skippedBefore);

        sigset_t maskAfter;
        QCOMPARE(pthread_sigmask(SIG_SETMASK, nullptr, &maskAfter), 0);
        for (int sig = 1; sig < SIGRTMAX; ++sig)
            QCOMPARE(sigismember(&maskAfter, sig), sigismember(&maskBefore, sig));
        // Everyone else's sigprocmask still works.
        sigset_t viaSigprocmask;
        QCOMPARE(sigprocmask(SIG_SETMASK, nullptr, &viaSigprocmask), 0);
        QCOMPARE(sigismember(&viaSigprocmask, SIGUSR2), 1);
        QCOMPARE(pthread_sigmask(SIG_UNBLOCK, &blockedBefore, nullptr), 0);
    }

    // If this fails, a frame pointer register that holds data (code built without frame pointers: a compiler, most
    // distribution binaries) near the top of the address space makes the frame-pointer walk read far outside the
    // stack copy (the bounds check wrapped around) and the session crashes.
    void framePointerWalkStaysInTheCopy()
    {
        ElfCache cache;
        ModuleIds ids(kFirstModuleId);
        ProcessMap map(&cache, &ids);
        QVERIFY(map.loadFromProc(getpid()));
        Unwinder unwinder;
        const OwnSample sample = deeperFrame(2);
        const RawSample raw = sample.view();
        UnwindOutput out;
        for (const uint64_t bp :
             {~uint64_t(0), ~uint64_t(0) - 7, ~uint64_t(0) - 15, raw.regs[RegSP] + raw.stack.size() - 8,
              raw.regs[RegSP] + raw.stack.size(), raw.regs[RegSP] - 8}) {
            std::vector<uint64_t> regs(raw.regs.begin(), raw.regs.end());
            regs[RegBP] = bp;
            unwinder.unwindFramePointers(UnwindInput{regs, raw.stack, &map, getpid()}, out);
            QCOMPARE(out.ips.size(), size_t(1)); // the first frame alone: no frame could be read
            QVERIFY(!out.complete);
        }
    }
};

QTEST_GUILESS_MAIN(TestProcessMap)
#include "tst_process_map.moc"
