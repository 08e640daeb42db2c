// The compact unwind tables (engine/agent/agent_unwind.h) and their builder (engine/unwind/unwind_table_builder):
// built from real modules of this machine, walked on real stacks of this very process and compared frame by frame
// with libunwind from the same registers, and fed corrupt files and corrupt stacks. No privileges needed.
#include "tests/engine/unwind/unwind_test_stacks.h"

#include "engine/agent/agent_unwind.h"
#include "engine/unwind/elf_cache.h"
#include "engine/unwind/unwind_table_builder.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <elf.h>
#include <link.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace emberline::engine;
using namespace emberline::agent;
using namespace emberline::test;

namespace {

// Debian's libpython, whatever its version; empty when none is installed.
QString findLibpython()
{
    const QDir dir(QStringLiteral("/usr/lib/x86_64-linux-gnu"));
    const QStringList found = dir.entryList({QStringLiteral("libpython3.*.so.1.0")}, QDir::Files, QDir::Name);
    return found.isEmpty() ? QString() : dir.filePath(found.last());
}

// The table's own invariants: sorted, non-overlapping, ending with a NoFde row, each row's fields in range.
void checkRows(const ModuleUnwindTable &table)
{
    QVERIFY(table.rows.size() >= 2);
    QCOMPARE(table.rows.back().kind, UnwindKind::NoFde);
    for (size_t i = 0; i < table.rows.size(); ++i) {
        const UnwindRow &row = table.rows[i];
        QVERIFY(static_cast<int>(row.kind) < kUnwindKindCount);
        if (i > 0)
            QVERIFY2(row.start > table.rows[i - 1].start, qPrintable(QString::number(i)));
        if (row.kind == UnwindKind::CfaRsp || row.kind == UnwindKind::CfaRbp)
            QVERIFY(row.cfaOffset >= 8 && row.rbpSlot <= 0);
    }
}

QString describe(const ModuleUnwindTable &table)
{
    static const char *const names[] = {"rsp", "rbp",    "end",      "expression", "signal",
                                        "plt", "no-fde", "register", "other"};
    const UnwindTableStats &s = table.stats;
    QString text = QStringLiteral("%1: %2 rows (%3 KiB), %4 FDEs (%5 from .debug_frame, %6 unread), %7 libdw rows, "
                                  "covered %8% of %9 code bytes (%10 B of PLT entries); rows by kind:")
                       .arg(QFileInfo(QString::fromStdString(table.path)).fileName())
                       .arg(table.rows.size())
                       .arg(double(table.rows.size() * sizeof(UnwindRow)) / 1024.0, 0, 'f', 1)
                       .arg(s.fdes)
                       .arg(s.debugFrameFdes)
                       .arg(s.unreadFdes)
                       .arg(s.dwarfRows)
                       .arg(100.0 * s.coveredShare(), 0, 'f', 2)
                       .arg(s.executableBytes)
                       .arg(s.pltBytes);
    for (int k = 0; k < kUnwindKindCount; ++k)
        text += QStringLiteral(" %1 %2 (%3 B)").arg(QLatin1String(names[k])).arg(s.rows[k]).arg(s.bytes[k]);
    return text;
}

// The offset and size of a section of an ELF file's bytes, read by hand so that a corrupt copy can be made.
bool findSection(const QByteArray &file, const char *wanted, qsizetype &offset, qsizetype &size,
                 uint64_t *address = nullptr)
{
    if (file.size() < qsizetype(sizeof(Elf64_Ehdr)))
        return false;
    Elf64_Ehdr ehdr;
    std::memcpy(&ehdr, file.constData(), sizeof(ehdr));
    const auto header = [&](int i, Elf64_Shdr &shdr) {
        const qsizetype at = qsizetype(ehdr.e_shoff) + qsizetype(i) * qsizetype(sizeof(Elf64_Shdr));
        if (at < 0 || at + qsizetype(sizeof(shdr)) > file.size())
            return false;
        std::memcpy(&shdr, file.constData() + at, sizeof(shdr));
        return true;
    };
    Elf64_Shdr strings;
    if (!header(ehdr.e_shstrndx, strings))
        return false;
    for (int i = 0; i < ehdr.e_shnum; ++i) {
        Elf64_Shdr shdr;
        if (!header(i, shdr) || strings.sh_offset + shdr.sh_name >= uint64_t(file.size()))
            continue;
        if (std::strcmp(file.constData() + strings.sh_offset + shdr.sh_name, wanted) == 0) {
            offset = qsizetype(shdr.sh_offset);
            size = qsizetype(shdr.sh_size);
            if (address)
                *address = shdr.sh_addr;
            return offset + size <= file.size();
        }
    }
    return false;
}

} // namespace

class TstUnwindTable : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void buildsRealModules_data();
    void buildsRealModules();
    void buildsEveryLoadedModule();
    void pltEntriesFollowTheLinkersRule();
    void sharedBytesAreTheTable();
    void cacheBuildsAModuleOnce();
    void cacheServesWorkersAtOnce();
    void walkAgreesWithLibunwind();
    void signalHandlerWalkAgreesWithLibunwind();
    void corruptUnwindInfoNeverCrashes();
    void callersAreLookedUpAtTheirCall();
    void walkStaysInsideTheStack();
    void randomTablesAndStacksStayInside();
};

void TstUnwindTable::buildsRealModules_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<double>("minCovered");
    QTest::newRow("libc") << QString::fromStdString(loadedModulePath("libc.so.6")) << 0.95;
    QTest::newRow("libstdc++") << QString::fromStdString(loadedModulePath("libstdc++.so.6")) << 0.95;
    QTest::newRow("libpython") << findLibpython() << 0.95;
    // A small program's code is mostly the C runtime's start-up pieces (crtstuff's tm_clones and frame_dummy, .init),
    // which have no FDE: a third of its 1.3 KB.
    QTest::newRow("cpu_split_nofp") << QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split_nofp") << 0.6;
    // Its own functions' CFI in .debug_frame only, the C runtime's in .eh_frame.
    QTest::newRow("debug_frame") << QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split_debug_frame") << 0.6;
}

// A module's table covers nearly all of its code, and what it leaves to the fallback is what the module holds:
// the PLT, the C library's signal return, the hand-written starts of threads.
void TstUnwindTable::buildsRealModules()
{
    QFETCH(QString, path);
    QFETCH(double, minCovered);
    if (path.isEmpty() || !QFile::exists(path))
        QSKIP("module not installed on this machine");
    auto built = buildUnwindTable(path.toStdString());
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().message.c_str());
    const ModuleUnwindTable &table = *built.value();
    qInfo().noquote() << describe(table);
    checkRows(table);
    const UnwindTableStats &s = table.stats;
    QVERIFY(s.fdes > 0);
    QCOMPARE(s.unreadFdes, 0u);
    QVERIFY2(s.coveredShare() > minCovered, "code built by a compiler has CFI");
    QVERIFY(s.rows[int(UnwindKind::CfaRsp)] > 0);
    QVERIFY2(s.pltBytes > 0, "the lazy-binding PLT's entries are tabled from its expression");
    if (QTest::currentDataTag() == QLatin1String("debug_frame"))
        QVERIFY2(s.debugFrameFdes > 0, "the program's own functions come from .debug_frame");
    if (QTest::currentDataTag() == QLatin1String("libc")) {
        QVERIFY2(s.rows[int(UnwindKind::Signal)] > 0, "__restore_rt is a signal frame");
        QVERIFY2(s.rows[int(UnwindKind::End)] > 0, "clone3 ends a thread's stack");
    }
    // The fallbacks stay a small part of the code, whatever their kind.
    uint64_t fallbackBytes = 0;
    for (int k = int(UnwindKind::Expression); k < kUnwindKindCount; ++k)
        fallbackBytes += s.bytes[k];
    QVERIFY(fallbackBytes < s.executableBytes * (1.0 - minCovered));
}

// Every module this test process maps (Qt, ICU, OpenSSL's hand-written assembly, protobuf, the engine's libraries):
// each builds, keeps the table's invariants, reads every FDE, and covers most of its code.
void TstUnwindTable::buildsEveryLoadedModule()
{
    std::vector<std::string> paths;
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
            if (info->dlpi_name && info->dlpi_name[0] == '/')
                static_cast<std::vector<std::string> *>(data)->push_back(info->dlpi_name);
            return 0;
        },
        &paths);
    QVERIFY(paths.size() >= 10);
    std::array<uint64_t, kUnwindKindCount> rows{};
    uint64_t code = 0, covered = 0;
    double lowest = 1.0;
    std::string lowestName;
    for (const std::string &path : paths) {
        auto built = buildUnwindTable(path);
        QVERIFY2(built.ok(), built.ok() ? "" : built.error().message.c_str());
        const ModuleUnwindTable &table = *built.value();
        checkRows(table);
        QCOMPARE(table.stats.unreadFdes, 0u);
        for (int k = 0; k < kUnwindKindCount; ++k)
            rows[size_t(k)] += table.stats.rows[size_t(k)];
        // OpenSSL's libcrypto (mapped when the test binary's objects reach libcurl: which ones do depends on how the
        // build groups the engine's sources) is a tenth of all the code here, and about 17% of it is hand-written
        // assembly without CFI: held to its own bound, so that the others' share does not hang on whether it is
        // mapped.
        if (path.find("/libcrypto.so") != std::string::npos) {
            QVERIFY2(table.stats.coveredShare() > 0.8, qPrintable(QString::number(table.stats.coveredShare())));
            continue;
        }
        code += table.stats.executableBytes;
        covered += table.stats.coveredBytes;
        if (table.stats.executableBytes >= 4096 &&
            table.stats.coveredShare() < lowest) { // (ICU data: the C runtime, 0.3 KB)
            lowest = table.stats.coveredShare();
            lowestName = path;
        }
    }
    QString kinds;
    for (int k = 0; k < kUnwindKindCount; ++k)
        kinds += QStringLiteral(" %1").arg(rows[size_t(k)]);
    qInfo("%zu modules, %.1f MB of code, %.2f%% covered (the least: %.1f%%, %s); rows by kind (rsp rbp end expression "
          "signal plt no-fde register other):%s",
          paths.size(), double(code) / 1e6, 100.0 * double(covered) / double(code), 100.0 * lowest, lowestName.c_str(),
          qPrintable(kinds));
    QVERIFY(double(covered) > 0.95 * double(code));
}

// A lazy-binding PLT entry (jmp *GOT; push index; jmp PLT0) is described by one expression over the whole .plt:
// RSP + 8 until the push has run, RSP + 16 after it. The table holds it as two rows per entry.
void TstUnwindTable::pltEntriesFollowTheLinkersRule()
{
    const std::string libc = loadedModulePath("libc.so.6");
    QFile file(QString::fromStdString(libc));
    QVERIFY(file.open(QIODevice::ReadOnly));
    qsizetype offset = 0, size = 0;
    uint64_t plt = 0;
    QVERIFY(findSection(file.readAll(), ".plt", offset, size, &plt));
    QVERIFY(size >= 48);
    auto built = buildUnwindTable(libc);
    QVERIFY(built.ok());
    const UnwindTable table = built.value()->view();
    for (uint64_t entry = plt + 16; entry < plt + uint64_t(size); entry += 16) {
        const UnwindRow *before = findUnwindRow(table, entry + 10);
        const UnwindRow *after = findUnwindRow(table, entry + 11);
        QVERIFY(before && after);
        QCOMPARE(before->kind, UnwindKind::CfaRsp);
        QCOMPARE(before->cfaOffset, uint16_t(8));
        QCOMPARE(after->kind, UnwindKind::CfaRsp);
        QCOMPARE(after->cfaOffset, uint16_t(16));
        QCOMPARE(findUnwindRow(table, entry)->cfaOffset, uint16_t(8));
    }
}

// What the agent will read is the table itself, behind a header it checks.
void TstUnwindTable::sharedBytesAreTheTable()
{
    auto built = buildUnwindTable(loadedModulePath("libc.so.6"));
    QVERIFY(built.ok());
    const std::vector<uint8_t> bytes = built.value()->sharedBytes();
    UnwindTable table;
    QVERIFY(unwindTableFromBytes(bytes.data(), bytes.size(), table));
    QCOMPARE(table.count, uint32_t(built.value()->rows.size()));
    QVERIFY(std::memcmp(table.rows, built.value()->rows.data(), table.count * sizeof(UnwindRow)) == 0);
    QVERIFY(!unwindTableFromBytes(bytes.data(), bytes.size() - 1, table));
    std::vector<uint8_t> otherVersion = bytes;
    otherVersion[4] ^= 0xff;
    QVERIFY(!unwindTableFromBytes(otherVersion.data(), otherVersion.size(), table));
    QCOMPARE(table.count, 0u);
}

// Two processes that map the same library ask for it by two paths (a symbolic link, a copy): one build, one table.
void TstUnwindTable::cacheBuildsAModuleOnce()
{
    ElfCache elfs;
    UnwindTableCache cache(elfs);
    const std::string libc = loadedModulePath("libc.so.6");
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("libc-copy.so.6"));
    QVERIFY(QFile::copy(QString::fromStdString(libc), copy));
    auto first = cache.get(libc);
    auto second = cache.get(copy.toStdString());
    QVERIFY(first.ok() && second.ok());
    QCOMPARE(first.value().get(), second.value().get());
    QVERIFY(!first.value()->buildId.empty());
    QCOMPARE(cache.size(), size_t(1));
    QVERIFY(!cache.get("/nonexistent/libnothing.so").ok());
    QVERIFY(!cache.get("/nonexistent/libnothing.so").ok());
}

// Workers asking for the same modules at once (the session's workers, one per process image) all get the one table
// that was kept, whichever built first.
void TstUnwindTable::cacheServesWorkersAtOnce()
{
    ElfCache elfs;
    UnwindTableCache cache(elfs);
    const std::vector<std::string> paths{loadedModulePath("libc.so.6"), loadedModulePath("libstdc++.so.6"),
                                         loadedModulePath("libm.so.6")};
    for (const std::string &path : paths)
        QVERIFY(!path.empty());
    std::vector<std::vector<const ModuleUnwindTable *>> got(4);
    std::vector<std::thread> workers;
    workers.reserve(got.size());
    for (auto &mine : got) {
        workers.emplace_back([&] {
            for (const std::string &path : paths) {
                auto table = cache.get(path);
                mine.push_back(table.ok() ? table.value().get() : nullptr);
            }
        });
    }
    for (std::thread &worker : workers)
        worker.join();
    QCOMPARE(cache.size(), paths.size());
    for (size_t module = 0; module < paths.size(); ++module) {
        const ModuleUnwindTable *first = cache.get(paths[module]).value().get();
        for (const auto &mine : got)
            QCOMPARE(mine[module], first);
    }
}

// The table walk against libunwind, from the same registers, on the stacks of a comparator that qsort (C library
// code without frame pointers) calls: at recursion depths from 1 to 24 on the main thread, in a new thread (whose
// stack ends at clone3) and under std::call_once (libstdc++'s __once_proxy, the C library's pthread_once). Every
// return address must agree down to where libunwind stops; a walk that stops early on a fallback row is counted.
void TstUnwindTable::walkAgreesWithLibunwind()
{
    ElfCache elfs;
    UnwindTableCache cache(elfs);
    StackProbe probe(cache);
    std::vector<StackComparison> runs;
    for (int depth = 1; depth <= 24; ++depth)
        runs.push_back(probe.compareUnderQsort(depth));
    runs.push_back(probe.compareInThread(6));
    runs.push_back(probe.compareUnderCallOnce(3));

    int frames = 0, agreed = 0, fallbacks = 0, whole = 0;
    for (const StackComparison &run : runs) {
        QVERIFY2(run.outOfBoundsReads == 0, "the walk read outside the thread's stack");
        QVERIFY2(run.libunwind.size() >= 6, "libunwind walked the stack");
        const size_t common = std::min(run.walked.size(), run.libunwind.size());
        for (size_t i = 0; i < common; ++i) {
            ++frames;
            if (run.walked[i] == run.libunwind[i])
                ++agreed;
            else
                qWarning("%s frame %zu: walk %#llx, libunwind %#llx", run.name.c_str(), i,
                         static_cast<unsigned long long>(run.walked[i]),
                         static_cast<unsigned long long>(run.libunwind[i]));
        }
        if (run.walk.last.status == UnwindStatus::End) {
            ++whole;
            QCOMPARE(run.walked.size(), run.libunwind.size());
        } else {
            ++fallbacks;
            qInfo("%s: the walk stopped at frame %u of %zu (status %d, kind %d)", run.name.c_str(), run.walk.frames,
                  run.libunwind.size(), int(run.walk.last.status), int(run.walk.last.kind));
        }
    }
    qInfo("%zu stacks: %d frames compared, %d agreed with libunwind; %d walks whole to the stack's end, %d stopped on "
          "a fallback",
          runs.size(), frames, agreed, whole, fallbacks);
    QCOMPARE(agreed, frames);
    QVERIFY2(fallbacks * 10 <= int(runs.size()), "fallbacks are rare on compiled code");
}

// The agent's case: a CPU timer's signal interrupts code anywhere (a prologue, an epilogue, the C library's qsort and
// memcpy), and the handler walks from the interrupted registers, the first frame looked up at its own pc. Every
// return address must agree with libunwind's walk of the same signal context; walks that stop on a fallback row
// (the vdso's clock, which this probe does not table) are counted and must be rare.
void TstUnwindTable::signalHandlerWalkAgreesWithLibunwind()
{
    ElfCache elfs;
    UnwindTableCache cache(elfs);
    StackProbe probe(cache);
    const std::vector<SignalSample> samples = probe.sampleWithSignals(300, 12);
    QVERIFY2(samples.size() >= 100, "the CPU timer sampled the loop");
    int frames = 0, agreed = 0, whole = 0, fallbacks = 0;
    for (const SignalSample &sample : samples) {
        QCOMPARE(sample.outOfBoundsReads, 0);
        QVERIFY(sample.libunwindFrames >= 2); // (a sample may land in the loop's clock reading, in the vdso)
        const uint32_t common = std::min(sample.walk.frames, sample.libunwindFrames);
        for (uint32_t i = 0; i < common; ++i) {
            ++frames;
            if (sample.walked[i] == sample.libunwind[i])
                ++agreed;
            else
                qWarning("sample frame %u: walk %#llx, libunwind %#llx", i,
                         static_cast<unsigned long long>(sample.walked[i]),
                         static_cast<unsigned long long>(sample.libunwind[i]));
        }
        if (sample.walk.last.status == UnwindStatus::End) {
            ++whole;
            QCOMPARE(sample.walk.frames, sample.libunwindFrames);
        } else {
            ++fallbacks;
            qInfo("a sample's walk stopped at frame %u of %u (status %d, kind %d, pc %#llx)", sample.walk.frames,
                  sample.libunwindFrames, int(sample.walk.last.status), int(sample.walk.last.kind),
                  static_cast<unsigned long long>(sample.walked[sample.walk.frames - 1]));
        }
    }
    qInfo("%zu samples in a signal handler: %d frames compared, %d agreed with libunwind; %d walks whole, %d stopped "
          "on a fallback",
          samples.size(), frames, agreed, whole, fallbacks);
    QCOMPARE(agreed, frames);
    QVERIFY2(fallbacks * 50 <= int(samples.size()), "fallbacks are rare on compiled code");
}

// A module whose unwind information is garbage (random bytes over .eh_frame and its lookup table, a length field
// that points past the section, a file cut short) gives an error or a table that keeps its invariants; never a
// crash.
void TstUnwindTable::corruptUnwindInfoNeverCrashes()
{
    QFile original(QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split_nofp"));
    QVERIFY(original.open(QIODevice::ReadOnly));
    const QByteArray bytes = original.readAll();
    qsizetype ehOffset = 0, ehSize = 0, hdrOffset = 0, hdrSize = 0;
    QVERIFY(findSection(bytes, ".eh_frame", ehOffset, ehSize));
    QVERIFY(findSection(bytes, ".eh_frame_hdr", hdrOffset, hdrSize));
    QTemporaryDir dir;
    std::mt19937 random(50);
    int built = 0, refused = 0;
    for (int variant = 0; variant < 64; ++variant) {
        QByteArray corrupt = bytes;
        const int rate = 1 << (variant % 8); // one byte in 2^k is replaced
        for (qsizetype i = 0; i < ehSize; ++i) {
            if (random() % uint32_t(rate) == 0)
                corrupt[ehOffset + i] = char(random());
        }
        if (variant % 2 == 1) {
            for (qsizetype i = 8; i < hdrSize; ++i) // keep the header's encodings, scramble its table
                corrupt[hdrOffset + i] = char(random());
        }
        if (variant % 16 == 5) // the first CIE's length points past the section
            std::memset(corrupt.data() + ehOffset, 0x7f, 4);
        if (variant % 16 == 9) // the file ends inside .eh_frame
            corrupt.truncate(ehOffset + ehSize / 2);
        const QString path = dir.filePath(QStringLiteral("corrupt-%1").arg(variant));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(corrupt);
        out.close();
        auto table = buildUnwindTable(path.toStdString());
        if (!table.ok()) {
            ++refused;
            continue;
        }
        ++built;
        checkRows(*table.value());
    }
    qInfo("64 corrupt copies: %d tables built (their rows sorted and whole), %d refused", built, refused);
}

// A return address may be the first byte of the next row (a call that ends a function, a noreturn call): a caller is
// looked up at pc - 1, the interrupted frame at its pc.
void TstUnwindTable::callersAreLookedUpAtTheirCall()
{
    const UnwindRow rows[] = {
        {0x1000, 32, UnwindKind::CfaRsp, 0}, {0x1010, 8, UnwindKind::CfaRsp, 0}, {0x1020, 0, UnwindKind::NoFde, 0}};
    const UnwindTable table{rows, 3};
    alignas(16) uint64_t words[16] = {};
    const auto low = reinterpret_cast<uint64_t>(&words[0]);
    const StackBounds stack{low, low + sizeof(words)};
    words[0] = 0x2222; // the return address of a frame whose CFA is sp + 8
    words[3] = 0x4444; // ... of one whose CFA is sp + 32
    UnwindRegs first{0x1010, low, 0};
    QCOMPARE(unwindStep(table, 0, true, stack, first, OwnStackReader{}).status, UnwindStatus::Stepped);
    QCOMPARE(first.pc, uint64_t(0x2222));
    UnwindRegs caller{0x1010, low, 0};
    QCOMPARE(unwindStep(table, 0, false, stack, caller, OwnStackReader{}).status, UnwindStatus::Stepped);
    QCOMPARE(caller.pc, uint64_t(0x4444));
    QCOMPARE(caller.sp, low + 32);
}

// A corrupted frame pointer, a CFA past the stack's top, a saved RBP slot below its bottom, a frame that would not
// move up: the step stops with a reason and reads nothing outside the bounds.
void TstUnwindTable::walkStaysInsideTheStack()
{
    const UnwindRow rows[] = {{0x1000, 16, UnwindKind::CfaRbp, -2},
                              {0x1100, 24, UnwindKind::CfaRsp, -3},
                              {0x1200, 64000, UnwindKind::CfaRsp, 0},
                              {0x1300, 8, UnwindKind::Expression, 0},
                              {0x1400, 0, UnwindKind::NoFde, 0}};
    const UnwindTable table{rows, 5};
    const uint64_t bias = 0x400000;
    alignas(16) uint64_t words[64] = {};
    const auto low = reinterpret_cast<uint64_t>(&words[0]);
    const StackBounds stack{low, low + sizeof(words)};
    int outside = 0;
    auto read = [&](uint64_t address, uint64_t &value) {
        if (address < stack.low || address + 8 > stack.high)
            ++outside;
        return OwnStackReader{}(address, value);
    };
    const auto step = [&](uint64_t pc, uint64_t sp, uint64_t bp) {
        UnwindRegs regs{pc, sp, bp};
        return unwindStep(table, bias, true, stack, regs, read).status;
    };
    QCOMPARE(step(bias + 0x1010, low + 64, 0xdead0000beef), UnwindStatus::OutOfBounds);          // a corrupted RBP
    QCOMPARE(step(bias + 0x1010, low + 64, low + sizeof(words) - 8), UnwindStatus::OutOfBounds); // CFA past the top
    QCOMPARE(step(bias + 0x1010, low + 64, low + 8), UnwindStatus::BadFrame); // the caller would be below
    QCOMPARE(step(bias + 0x1110, low - 8, 0), UnwindStatus::OutOfBounds);     // RBP's slot below the bottom
    QCOMPARE(step(bias + 0x1210, low + 64, 0), UnwindStatus::OutOfBounds);    // a huge frame
    QCOMPARE(step(bias + 0x1310, low + 64, 0), UnwindStatus::Fallback);
    QCOMPARE(step(bias + 0x1410, low + 64, 0), UnwindStatus::Fallback); // past the table: the closing NoFde row
    QCOMPARE(step(bias + 0x0ff0, low + 64, 0), UnwindStatus::NoRow);    // below the table
    QCOMPARE(step(0x10, low + 64, 0), UnwindStatus::NoRow);             // below the bias
    // A good step: RBP-based, the saved RBP and return address read from inside.
    words[20] = 0x1234; // the saved RBP at CFA - 16
    words[21] = bias + 0x1105;
    UnwindRegs regs{bias + 0x1010, low + 64, low + uint64_t(20) * 8};
    const UnwindStep ok = unwindStep(table, bias, true, stack, regs, read);
    QCOMPARE(ok.status, UnwindStatus::Stepped);
    QCOMPARE(regs.pc, bias + 0x1105);
    QCOMPARE(regs.sp, low + uint64_t(22) * 8);
    QCOMPARE(regs.bp, uint64_t(0x1234));
    QCOMPARE(outside, 0);
}

// Random rows and random stack words (pointers into the stack, just outside it, anywhere): thousands of walks,
// none reading outside the bounds, none looping past its depth.
void TstUnwindTable::randomTablesAndStacksStayInside()
{
    std::mt19937_64 random(0x5eed);
    alignas(16) uint64_t words[256];
    const auto low = reinterpret_cast<uint64_t>(&words[0]);
    const StackBounds stack{low, low + sizeof(words)};
    const uint64_t bias = 0x10000;
    std::vector<UnwindRow> rows;
    int outside = 0, stepped = 0;
    auto read = [&](uint64_t address, uint64_t &value) {
        if (address < stack.low || address + 8 > stack.high) {
            ++outside;
            return false;
        }
        return OwnStackReader{}(address, value);
    };
    for (int round = 0; round < 2000; ++round) {
        rows.clear();
        uint32_t start = 0x100;
        for (int i = 0; i < 16; ++i) {
            const auto kind = static_cast<UnwindKind>(random() % kUnwindKindCount);
            rows.push_back(UnwindRow{start, static_cast<uint16_t>(random() % 4 == 0 ? random() : 8 * (random() % 40)),
                                     kind, static_cast<int8_t>(-int(random() % 6))});
            start += 0x10;
        }
        rows.push_back(UnwindRow{start, 0, UnwindKind::NoFde, 0});
        for (uint64_t &word : words) {
            switch (random() % 4) {
            case 0:
                word = low + random() % (sizeof(words) + 64) - 32;
                break;
            case 1:
                word = bias + 0x100 + random() % 0x120;
                break;
            case 2:
                word = random();
                break;
            default:
                word = 0;
                break;
            }
        }
        const UnwindTable table{rows.data(), uint32_t(rows.size())};
        auto find = [&](uint64_t, UnwindTable &found, uint64_t &foundBias) {
            found = table;
            foundBias = bias;
            return true;
        };
        uint64_t pcs[64];
        const UnwindRegs regs{bias + 0x100 + random() % 0x110, low + 8 * (random() % 256), words[random() % 256]};
        const UnwindWalk walk = unwindStack(find, stack, regs, pcs, 64, read);
        QVERIFY(walk.frames >= 1 && walk.frames <= 64);
        stepped += int(walk.frames) - 1;
    }
    QCOMPARE(outside, 0);
    qInfo("2000 random walks: %d steps, no read outside the stack", stepped);
}

QTEST_GUILESS_MAIN(TstUnwindTable)
#include "tst_unwind_table.moc"
