// The caches that spare each session work done before: uncompressed copies of compressed debug files (libc's from
// Debian's libc6-dbg), the line tables of modules named from DWARF, and the kernel's symbols kept per boot. Each must
// name every address exactly as the uncached path does, ignore and replace a damaged file, and fall back when its
// folder cannot be written.
#include "engine/symbols/kernel_symbols.h"
#include "engine/symbols/stores/debug_file_store.h"
#include "engine/symbols/stores/line_table_store.h"
#include "engine/symbols/symbolizer.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using emberline::engine::KernelSymbols;
using emberline::engine::ModuleSymbols;
using emberline::engine::SymbolFrame;
using emberline::engine::Symbolizer;
using emberline::engine::SymbolizerOptions;

namespace {

const std::string libcPath = "/lib/x86_64-linux-gnu/libc.so.6";

// Offsets across libc's executable segment, one every 613 bytes: a few thousand addresses, inlined code among them.
std::vector<uint64_t> textOffsets(const std::string &path)
{
    std::vector<uint64_t> offsets;
    elf_version(EV_CURRENT);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return offsets;
    if (Elf *elf = elf_begin(fd, ELF_C_READ, nullptr)) {
        size_t count = 0;
        elf_getphdrnum(elf, &count);
        for (size_t i = 0; i < count; ++i) {
            GElf_Phdr header;
            if (gelf_getphdr(elf, int(i), &header) != nullptr && header.p_type == PT_LOAD && (header.p_flags & PF_X))
                for (uint64_t at = header.p_offset; at < header.p_offset + header.p_filesz; at += 613)
                    offsets.push_back(at);
        }
        elf_end(elf);
    }
    ::close(fd);
    return offsets;
}

using Answers = std::vector<std::vector<SymbolFrame>>;

// Every offset symbolized by a fresh Symbolizer (closed at the end, when a copy is written), and how the module's
// names were found.
// `usedCopy`: whether the debug file mapped while symbolizing was a kept copy (libelf maps the file it reads).
Answers symbolizeAll(const std::string &buildId, const std::vector<uint64_t> &offsets, ModuleSymbols *info,
                     bool *usedCopy = nullptr)
{
    Answers answers;
    Symbolizer symbolizer;
    for (uint64_t offset : offsets)
        answers.push_back(symbolizer.symbolize(libcPath, buildId, offset));
    *info = symbolizer.moduleSymbols(libcPath, buildId);
    if (usedCopy != nullptr) {
        QFile maps(QStringLiteral("/proc/self/maps"));
        *usedCopy = maps.open(QIODevice::ReadOnly) &&
                    maps.readAll().contains(QByteArray("/emberline/debug-files/") + buildId.c_str());
    }
    return answers;
}

// Every offset symbolized by a fresh Symbolizer that keeps line tables in `lineTables`, which it writes at the end.
struct LineTableRun {
    Answers answers;
    size_t readBack = 0;
    size_t decoded = 0;
    size_t written = 0;
};

LineTableRun symbolizeWithLineTables(const std::string &buildId, const std::vector<uint64_t> &offsets,
                                     const std::string &lineTables)
{
    SymbolizerOptions options;
    options.lineTableDirectory = lineTables;
    Symbolizer symbolizer(options);
    LineTableRun run;
    for (uint64_t offset : offsets)
        run.answers.push_back(symbolizer.symbolize(libcPath, buildId, offset));
    run.readBack = symbolizer.lineUnitsReadBack();
    run.decoded = symbolizer.lineUnitsDecoded();
    run.written = symbolizer.keepLineTables();
    return run;
}

QStringList copiesIn(const QString &cacheHome)
{
    return QDir(cacheHome + QStringLiteral("/emberline/debug-files")).entryList({QStringLiteral("*.debug")});
}

size_t countInlined(const Answers &answers)
{
    size_t inlined = 0;
    for (const auto &frames : answers)
        inlined += frames.size() > 1;
    return inlined;
}

} // namespace

class TstSymbolCaches : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_home;
    std::string m_buildId;
    std::vector<uint64_t> m_offsets;
    Answers m_uncached;
    ModuleSymbols m_uncachedInfo;

    void useCacheHome(const QString &path) { qputenv("XDG_CACHE_HOME", path.toLocal8Bit()); }

private Q_SLOTS: // NOLINT(readability-redundant-access-specifiers): the test functions, for moc
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        m_buildId = Symbolizer::readBuildId(libcPath);
        const std::string debugFile =
            "/usr/lib/debug/.build-id/" + m_buildId.substr(0, 2) + '/' + m_buildId.substr(2) + ".debug";
        const int fd = ::open(debugFile.c_str(), O_RDONLY | O_CLOEXEC);
        if (m_buildId.size() < 4 || fd < 0)
            QSKIP("libc's debug file is not installed (Debian: libc6-dbg)");
        const bool compressed = emberline::engine::hasCompressedSections(fd);
        ::close(fd);
        if (!compressed)
            QSKIP("libc's debug file has no compressed sections: nothing to keep a copy of");
        m_offsets = textOffsets(libcPath);
        QVERIFY(m_offsets.size() > 500);
        qputenv("EMBERLINE_SYMBOL_CACHE", "off");
        m_uncached = symbolizeAll(m_buildId, m_offsets, &m_uncachedInfo);
        qunsetenv("EMBERLINE_SYMBOL_CACHE");
        // DWARF names, lines and inlined frames: what the copy must give back the same.
        QVERIFY(countInlined(m_uncached) > 10);
        QCOMPARE(int(m_uncachedInfo.status), int(emberline::engine::SymbolStatus::FullDwarf));
    }

    void libcCopyGivesTheSameFrames()
    {
        const QString cacheHome = m_home.path() + QStringLiteral("/same");
        useCacheHome(cacheHome);
        ModuleSymbols info;
        // Cold: the original is read, and the copy written when the module closes.
        bool usedCopy = true;
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info, &usedCopy) == m_uncached);
        QVERIFY(!usedCopy);
        const QStringList copies = copiesIn(cacheHome);
        QCOMPARE(copies.size(), 1);
        QVERIFY(copies.first().startsWith(QString::fromStdString(m_buildId)));
        const QString copy = cacheHome + QStringLiteral("/emberline/debug-files/") + copies.first();
        const int fd = ::open(copy.toLocal8Bit().constData(), O_RDONLY | O_CLOEXEC);
        QVERIFY(fd >= 0);
        QVERIFY(!emberline::engine::hasCompressedSections(fd)); // libdw inflated every section it reads
        ::close(fd);
        // Warm: the copy is read, and every frame is the same, as is where the names were found.
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info, &usedCopy) == m_uncached);
        QVERIFY(usedCopy);
        QCOMPARE(int(info.status), int(m_uncachedInfo.status));
        QCOMPARE(int(info.source), int(m_uncachedInfo.source));
        QCOMPARE(copiesIn(cacheHome), copies);
    }

    void damagedCopyIsReplaced()
    {
        const QString cacheHome = m_home.path() + QStringLiteral("/damaged");
        useCacheHome(cacheHome);
        ModuleSymbols info;
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info) == m_uncached);
        const QString copy = cacheHome + QStringLiteral("/emberline/debug-files/") + copiesIn(cacheHome).value(0);
        const qint64 whole = QFileInfo(copy).size();
        QVERIFY(whole > 0);
        // Cut in half, then garbage: each is ignored, the original read, and a good copy written again.
        for (int damage = 0; damage < 2; ++damage) {
            if (damage == 0) {
                QVERIFY(::truncate(copy.toLocal8Bit().constData(), whole / 2) == 0);
            } else {
                QFile file(copy);
                QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
                file.write(QByteArray(4096, 'x'));
            }
            bool usedCopy = true;
            QVERIFY(symbolizeAll(m_buildId, m_offsets, &info, &usedCopy) == m_uncached);
            QVERIFY(!usedCopy);
            QCOMPARE(QFileInfo(copy).size(), whole);
        }
        bool usedCopy = false;
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info, &usedCopy) == m_uncached);
        QVERIFY(usedCopy);
    }

    void unwritableCacheFallsBack()
    {
        // The cache folder's parent is a regular file: nothing can be created under it.
        const QString blocker = m_home.path() + QStringLiteral("/blocker");
        QFile file(blocker);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        useCacheHome(blocker);
        ModuleSymbols info;
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info) == m_uncached);
        QVERIFY(symbolizeAll(m_buildId, m_offsets, &info) == m_uncached);
        QVERIFY(QFileInfo(blocker).isFile());
    }

    void keptLineTablesNameAsLibdw();
    void damagedLineTablesAreReplaced();
    void keptKernelTableNamesAsTheFile();
    void damagedKernelTableIsReplaced();
    void kernelTableNeedsShownAddresses();
};

namespace {

// /proc/kallsyms' addresses to try: each symbol's own, one past it, and the one just before the next.
std::vector<uint64_t> kernelProbes(const std::string &path)
{
    std::vector<uint64_t> probes;
    // Read as a stream: /proc files tell a size of 0.
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) {
        const uint64_t address = std::strtoull(line.c_str(), nullptr, 16);
        if (address != 0) {
            probes.push_back(address);
            probes.push_back(address + 1);
            probes.push_back(address - 1);
        }
    }
    return probes;
}

// A kallsyms-like file of a made-up kernel, with its boot id, kptr_restrict and modules beside it.
KernelSymbols::LiveFiles fakeKernel(const QString &folder, bool shown)
{
    QDir().mkpath(folder);
    auto write = [&](const char *name, const QByteArray &text) {
        QFile file(folder + QLatin1Char('/') + QLatin1String(name));
        if (file.open(QIODevice::WriteOnly | QIODevice::Truncate))
            file.write(text);
        return (folder + QLatin1Char('/') + QLatin1String(name)).toStdString();
    };
    QByteArray kallsyms;
    const char *names[] = {"_text", "_stext", "start_kernel", "do_syscall_64", "schedule", "_etext"};
    for (int i = 0; i < 6; ++i)
        kallsyms += QByteArray::number(shown ? 0xffffffff81000000ULL + 0x100ULL * uint64_t(i > 0 ? i : 1) : 0, 16)
                        .rightJustified(16, '0') +
                    " T " + names[i] + '\n';
    kallsyms += QByteArray(shown ? "ffffffffc0001000" : "0000000000000000") + " t ext4_read\t[ext4]\n";
    KernelSymbols::LiveFiles files;
    files.kallsyms = write("kallsyms", kallsyms);
    files.bootId = write("boot_id", "0f0e0d0c-0b0a-0908-0706-050403020100\n");
    files.kptrRestrict = write("kptr_restrict", "0\n");
    files.modules = write("modules", "ext4 1003520 1 - Live 0xffffffffc0000000\n");
    return files;
}

bool sameAnswers(const KernelSymbols &kept, const KernelSymbols &whole, const std::vector<uint64_t> &probes,
                 size_t *answered)
{
    *answered = 0;
    for (uint64_t address : probes) {
        if (!kept.answersFully(address))
            continue;
        ++*answered;
        const KernelSymbols::Found a = kept.lookup(address);
        const KernelSymbols::Found b = whole.lookup(address);
        if (a.name != b.name || a.offset != b.offset)
            return false;
    }
    return true;
}

} // namespace

void TstSymbolCaches::keptLineTablesNameAsLibdw()
{
    // The debug file as libdw reads it, never a kept copy of it: the line tables are keyed by the file they came from.
    qputenv("EMBERLINE_SYMBOL_CACHE", "off");
    const std::string lineTables = (m_home.path() + QStringLiteral("/line-tables")).toStdString();
    // Cold: every unit met is decoded by libdw, and kept; the answers are libdw's.
    const LineTableRun cold = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(cold.answers == m_uncached);
    QCOMPARE(cold.readBack, size_t(0));
    QVERIFY2(cold.decoded > 10, std::to_string(cold.decoded).c_str());
    QCOMPARE(cold.written, size_t(1));
    QVERIFY(std::filesystem::exists(lineTables + "/" + m_buildId + ".lines"));
    // Warm: the same addresses named from the kept tables alone, exactly as libdw names them.
    const LineTableRun warm = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(warm.answers == m_uncached);
    QCOMPARE(warm.readBack, cold.decoded);
    QCOMPARE(warm.decoded, size_t(0));
    QCOMPARE(warm.written, size_t(0));
    // Addresses between those: in the kept units, or in units decoded now and added to the file.
    std::vector<uint64_t> between;
    for (uint64_t offset : m_offsets)
        between.push_back(offset + 301);
    Answers betweenUncached;
    {
        Symbolizer symbolizer;
        for (uint64_t offset : between)
            betweenUncached.push_back(symbolizer.symbolize(libcPath, m_buildId, offset));
    }
    const LineTableRun more = symbolizeWithLineTables(m_buildId, between, lineTables);
    QVERIFY(more.answers == betweenUncached);
    // A unit is read from the file when first asked for: those the addresses fall in.
    QVERIFY2(more.readBack > 0 && more.readBack <= cold.decoded, std::to_string(more.readBack).c_str());
    QCOMPARE(more.written, size_t(more.decoded > 0 ? 1 : 0));
    qunsetenv("EMBERLINE_SYMBOL_CACHE");
}

void TstSymbolCaches::damagedLineTablesAreReplaced()
{
    qputenv("EMBERLINE_SYMBOL_CACHE", "off");
    const std::string lineTables = (m_home.path() + QStringLiteral("/line-tables-damaged")).toStdString();
    const std::string file = lineTables + "/" + m_buildId + ".lines";
    const LineTableRun first = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QCOMPARE(first.written, size_t(1));
    const auto size = std::filesystem::file_size(file);
    QVERIFY(size > 1000);
    // A byte changed in the middle (a unit's checksum, or the front's, no longer matches), then the file cut short:
    // what does not read back is ignored, the names are libdw's, and the session's tables replace the file.
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(std::streamoff(size / 2));
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x5a);
        f.seekp(std::streamoff(size / 2));
        f.write(&c, 1);
    }
    const LineTableRun flipped = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(flipped.answers == m_uncached);
    QVERIFY2(
        flipped.decoded >= 1 && flipped.readBack + flipped.decoded == first.decoded,
        (std::to_string(flipped.readBack) + " read back, " + std::to_string(flipped.decoded) + " decoded").c_str());
    QCOMPARE(flipped.written, size_t(1));
    // The file's last byte is in the last unit's table: that unit alone is decoded again, the others are read back.
    {
        const auto rewritten = std::filesystem::file_size(file);
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(std::streamoff(rewritten - 1));
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x01);
        f.seekp(std::streamoff(rewritten - 1));
        f.write(&c, 1);
    }
    const LineTableRun lastUnit = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(lastUnit.answers == m_uncached);
    QCOMPARE(lastUnit.decoded, size_t(1));
    QCOMPARE(lastUnit.readBack, first.decoded - 1);
    QCOMPARE(lastUnit.written, size_t(1));
    std::filesystem::resize_file(file, size / 3);
    const LineTableRun cut = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(cut.answers == m_uncached);
    QCOMPARE(cut.readBack, size_t(0));
    QCOMPARE(cut.written, size_t(1));
    // Whole again: read back.
    const LineTableRun after = symbolizeWithLineTables(m_buildId, m_offsets, lineTables);
    QVERIFY(after.answers == m_uncached);
    QCOMPARE(after.readBack, first.decoded);
    // Kept under another key (as after the debug file was rebuilt): not used.
    {
        emberline::engine::LineTableStore other(lineTables, m_buildId, "another debug file");
        QCOMPARE(other.unitsReadBack(), size_t(0));
    }
    qunsetenv("EMBERLINE_SYMBOL_CACHE");
}

void TstSymbolCaches::keptKernelTableNamesAsTheFile()
{
    if (!KernelSymbols::problem().empty())
        QSKIP("/proc/kallsyms shows no addresses to this user");
    const std::string directory = (m_home.path() + QStringLiteral("/kernel")).toStdString();
    auto whole = KernelSymbols::load();
    QVERIFY(whole.ok());
    auto cold = KernelSymbols::loadLive(directory);
    QVERIFY(cold.ok());
    QVERIFY(!cold->kept());
    const auto files = QDir(QString::fromStdString(directory)).entryInfoList({QStringLiteral("kernel-*.syms")});
    QCOMPARE(files.size(), 1);
    struct stat status {};
    QVERIFY(::stat(files.first().filePath().toLocal8Bit().constData(), &status) == 0);
    QCOMPARE(int(status.st_mode & 0777), 0600); // kernel addresses are for this user only
    auto warm = KernelSymbols::loadLive(directory);
    QVERIFY(warm.ok());
    QVERIFY(warm->kept());
    const std::vector<uint64_t> probes = kernelProbes("/proc/kallsyms");
    size_t answered = 0;
    QVERIFY(sameAnswers(warm.value(), whole.value(), probes, &answered));
    QVERIFY(answered > 1000); // the kernel's own text: most of its functions (the rest of the file is data)
    QVERIFY(sameAnswers(cold.value(), whole.value(), probes, &answered));
    QCOMPARE(answered, probes.size());
}

void TstSymbolCaches::damagedKernelTableIsReplaced()
{
    const QString folder = m_home.path() + QStringLiteral("/fake-kernel");
    const KernelSymbols::LiveFiles files = fakeKernel(folder, true);
    const std::string directory = (folder + QStringLiteral("/store")).toStdString();
    QVERIFY(KernelSymbols::loadLive(directory, files).ok());
    const QString kept =
        QString::fromStdString(directory) + QStringLiteral("/kernel-0f0e0d0c-0b0a-0908-0706-050403020100.syms");
    const qint64 whole = QFileInfo(kept).size();
    QVERIFY(whole > 0);
    auto warm = KernelSymbols::loadLive(directory, files);
    QVERIFY(warm.ok() && warm->kept());
    QCOMPARE(warm->lookup(0xffffffff81000305).name, std::string_view("do_syscall_64"));
    QVERIFY(!warm->answersFully(0xffffffffc0001004)); // a module's: the whole file is asked
    QVERIFY(::truncate(kept.toLocal8Bit().constData(), whole - 3) == 0);
    auto afterCut = KernelSymbols::loadLive(directory, files);
    QVERIFY(afterCut.ok() && !afterCut->kept());
    QCOMPARE(QFileInfo(kept).size(), whole);
    // Another set of modules: the kept table is not used.
    QFile modules(QString::fromStdString(files.modules));
    QVERIFY(modules.open(QIODevice::Append));
    modules.write("nfs 500000 0 - Live 0xffffffffc0200000\n");
    modules.close();
    auto otherModules = KernelSymbols::loadLive(directory, files);
    QVERIFY(otherModules.ok() && !otherModules->kept());
    // An unwritable folder: the file is read each time.
    auto unwritable = KernelSymbols::loadLive(files.kallsyms + "/store", files);
    QVERIFY(unwritable.ok() && !unwritable->kept());
}

void TstSymbolCaches::kernelTableNeedsShownAddresses()
{
    const QString folder = m_home.path() + QStringLiteral("/hidden-kernel");
    const std::string directory = (folder + QStringLiteral("/store")).toStdString();
    // Zeros (kptr_restrict hides addresses): an error as before, and nothing kept.
    KernelSymbols::LiveFiles files = fakeKernel(folder, false);
    QVERIFY(!KernelSymbols::loadLive(directory, files).ok());
    QVERIFY(!QFileInfo::exists(QString::fromStdString(directory)) || QDir(QString::fromStdString(directory)).isEmpty());
    // Kept while shown; hidden again later: the kept table is not used either.
    files = fakeKernel(folder, true);
    QVERIFY(KernelSymbols::loadLive(directory, files).ok());
    QVERIFY(KernelSymbols::loadLive(directory, files)->kept());
    files = fakeKernel(folder, false);
    QVERIFY(!KernelSymbols::loadLive(directory, files).ok());
}

QTEST_GUILESS_MAIN(TstSymbolCaches)
#include "tst_symbol_caches.moc"
