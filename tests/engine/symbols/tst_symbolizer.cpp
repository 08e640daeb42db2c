#include "engine/symbols/symbolizer.h"
#include "tests/engine/symbols/elf_test_image.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <sys/auxv.h>

using emberline::engine::ModuleSymbols;
using emberline::engine::SymbolFrame;
using emberline::engine::Symbolizer;
using emberline::engine::SymbolStatus;

namespace {

const std::string targetPath = SYMBOLS_TARGET;
const std::string noPiePath = SYMBOLS_TARGET_NOPIE;
const std::string libraryPath = SYMBOLS_LIB;
const QString sourceDir = QStringLiteral(SYMBOLS_SOURCE_DIR);

std::string sourcePath(const char *fileName)
{
    return (sourceDir + QLatin1Char('/') + QLatin1String(fileName)).toStdString();
}

// The line of `fileName` that contains `marker` (a "LINE:" or "CALL:" comment), and the 1-based column of
// `token` on that line; so that editing the target program does not silently break the expectations.
struct SourcePosition {
    int line = 0;
    int column = 0;
};

SourcePosition findInSource(const char *fileName, const char *marker, const char *token = nullptr)
{
    QFile file(QString::fromStdString(sourcePath(fileName)));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    int lineNumber = 0;
    while (!file.atEnd()) {
        const QByteArray line = file.readLine();
        ++lineNumber;
        if (line.contains(marker))
            return {lineNumber, token != nullptr ? int(line.indexOf(token)) + 1 : 0};
    }
    return {};
}

// "function @ file:line" per frame, innermost first: compares as one readable list.
QStringList describe(const std::vector<SymbolFrame> &frames)
{
    QStringList lines;
    for (const SymbolFrame &frame : frames)
        lines << QString::fromStdString(frame.function + " @ " + frame.file + ':' + std::to_string(frame.line));
    return lines;
}

QString frameText(const std::string &function, const std::string &file, int line)
{
    return QString::fromStdString(function + " @ " + file + ':' + std::to_string(line));
}

uint64_t offsetOf(const ElfTestImage &image, const char *symbol)
{
    const std::optional<uint64_t> offset = image.symbolFileOffset(symbol);
    return offset.value_or(UINT64_MAX);
}

bool copyFile(const std::string &from, const QString &to, qint64 bytes = -1)
{
    QFile source(QString::fromStdString(from));
    QFile destination(to);
    if (!source.open(QIODevice::ReadOnly) || !destination.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    const QByteArray data = bytes < 0 ? source.readAll() : source.read(bytes);
    return destination.write(data) == data.size();
}

} // namespace

class TestSymbolizer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        m_target = ElfTestImage::fromFile(targetPath);
        m_noPie = ElfTestImage::fromFile(noPiePath);
        m_library = ElfTestImage::fromFile(libraryPath);
        QVERIFY2(m_target && m_noPie && m_library, "the symbols test targets are not built");
        // The premises of the tests: one PIE, one fixed-address executable, both with build ids.
        QCOMPARE(m_target->type(), ET_DYN);
        QCOMPARE(m_noPie->type(), ET_EXEC);
        QVERIFY(!m_target->buildId().empty());
    }

    // A class method in a namespace, in a PIE: if this fails, file offsets are not translated to link-time
    // addresses, or names are not the qualified, demangled form users search for.
    void pieMethod()
    {
        Symbolizer symbolizer;
        const auto frames =
            symbolizer.symbolize(targetPath, m_target->buildId(), offsetOf(*m_target, "emberline_mark_method"));
        const std::string file = sourcePath("symbols_target.cpp");
        QCOMPARE(describe(frames), QStringList{frameText("symbols::Shape::area(int) const", file,
                                                         findInSource("symbols_target.cpp", "LINE: method").line)});
    }

    // A template instance: if this fails, template arguments or the return type of the instance are lost.
    void pieTemplate()
    {
        Symbolizer symbolizer;
        const auto frames = symbolizer.symbolize(targetPath, "", offsetOf(*m_target, "emberline_mark_template"));
        QCOMPARE(describe(frames),
                 QStringList{frameText("long symbols::sumTwice<long>(long, long)", sourcePath("symbols_target.cpp"),
                                       findInSource("symbols_target.cpp", "LINE: template").line)});
    }

    // Two always-inline levels inside a noinline caller, across a header and a .cpp: if this fails, inline
    // frames are missing, out of order, or carry the wrong call sites (each outer frame must point at the
    // line that calls the inner one, not at its own first line).
    void pieInlineChain() { checkInlineChain(targetPath, *m_target); }

    // The same code linked at a fixed address (ET_EXEC): if this fails, the PT_LOAD translation assumes PIE.
    void nonPieInlineChainAndMethod()
    {
        checkInlineChain(noPiePath, *m_noPie);
        Symbolizer symbolizer;
        const auto frames =
            symbolizer.symbolize(noPiePath, m_noPie->buildId(), offsetOf(*m_noPie, "emberline_mark_method"));
        QCOMPARE(frames.size(), size_t(1));
        QCOMPARE(frames[0].function, std::string("symbols::Shape::area(int) const"));
    }

    // Without .debug_aranges (clang writes none unless asked): if this fails, such binaries lose their files,
    // lines and inlined frames and keep only the symbol table's names.
    void noAddressRangeTable()
    {
        const std::string copy = targetPath + ".noaranges";
        const auto image = ElfTestImage::fromFile(copy);
        QVERIFY(image.has_value());
        QVERIFY(!image->hasSection(".debug_aranges"));
        checkInlineChain(copy, *image);
        Symbolizer symbolizer;
        const auto frames = symbolizer.symbolize(copy, image->buildId(), offsetOf(*image, "emberline_mark_method"));
        QCOMPARE(describe(frames),
                 QStringList{frameText("symbols::Shape::area(int) const", sourcePath("symbols_target.cpp"),
                                       findInSource("symbols_target.cpp", "LINE: method").line)});
    }

    // main has no linkage name: if this fails, C-linkage functions lose their DW_AT_name.
    void plainName()
    {
        Symbolizer symbolizer;
        const auto frames = symbolizer.symbolize(targetPath, "", offsetOf(*m_target, "main"));
        QVERIFY(!frames.empty());
        QCOMPARE(frames.back().function, std::string("main"));
        QCOMPARE(frames.back().file, sourcePath("symbols_target.cpp"));
    }

    // A shared library, exported method and file-local function: if this fails, ET_DYN libraries or names in
    // anonymous namespaces are mishandled.
    void sharedLibrary()
    {
        Symbolizer symbolizer;
        const std::string file = sourcePath("symbols_lib.cpp");
        auto frames =
            symbolizer.symbolize(libraryPath, m_library->buildId(), offsetOf(*m_library, "emberline_mark_library"));
        QCOMPARE(describe(frames),
                 QStringList{frameText("symlib::Counter::increment(long)", file,
                                       findInSource("symbols_lib.cpp", "(emberline_mark_library)").line)});
        frames = symbolizer.symbolize(libraryPath, "", offsetOf(*m_library, "emberline_mark_library_local"));
        QCOMPARE(describe(frames),
                 QStringList{frameText("symlib::(anonymous namespace)::localHelper(int)", file,
                                       findInSource("symbols_lib.cpp", "(emberline_mark_library_local)").line)});
    }

    // No DWARF, full symbol table: if this fails, a library without debug info loses its names (or gets a
    // made-up file:line).
    void symbolTableOnly()
    {
        Symbolizer::Options noDebugDirectories;
        noDebugDirectories.debugDirectories.clear();
        Symbolizer symbolizer(noDebugDirectories);
        const std::string copy = libraryPath + ".symtab";
        auto frames = symbolizer.symbolize(copy, "", offsetOf(*m_library, "emberline_mark_library"));
        QCOMPARE(frames, (std::vector<SymbolFrame>{{"symlib::Counter::increment(long)", "", 0, 0}}));
        frames = symbolizer.symbolize(copy, "", offsetOf(*m_library, "emberline_mark_library_local"));
        QCOMPARE(frames, (std::vector<SymbolFrame>{{"symlib::(anonymous namespace)::localHelper(int)", "", 0, 0}}));
    }

    // Fully stripped: exported symbols only. If this fails, either .dynsym is not used, or an unexported
    // function is wrongly named after a neighbouring symbol instead of being left to `module+0xoffset`.
    void strippedLibrary()
    {
        Symbolizer::Options noDebugDirectories;
        noDebugDirectories.debugDirectories.clear();
        Symbolizer symbolizer(noDebugDirectories);
        const std::string copy = libraryPath + ".stripped";
        auto frames = symbolizer.symbolize(copy, "", offsetOf(*m_library, "emberline_mark_library"));
        QCOMPARE(frames, (std::vector<SymbolFrame>{{"symlib::Counter::increment(long)", "", 0, 0}}));
        frames = symbolizer.symbolize(copy, "", offsetOf(*m_library, "emberline_mark_library_local"));
        QCOMPARE(describe(frames), QStringList());
    }

    // Stripped executable, debug file at <dir>/.build-id/ab/cdef….debug: if this fails, distribution-style
    // debug packages are not found (the binary is copied away from its .debug so only the build id can work).
    void separateDebugByBuildId()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string &id = m_target->buildId();
        const QString idDir =
            dir.filePath(QStringLiteral("debug/.build-id/")) + QString::fromStdString(id.substr(0, 2));
        QVERIFY(QDir().mkpath(idDir) && QDir().mkpath(dir.filePath(QStringLiteral("bin"))));
        QVERIFY(copyFile(targetPath + ".debug", idDir + '/' + QString::fromStdString(id.substr(2)) + ".debug"));
        const QString binary = dir.filePath(QStringLiteral("bin/symbols_target"));
        QVERIFY(copyFile(targetPath + ".stripped", binary));

        Symbolizer::Options debugOptions;
        debugOptions.debugDirectories = {dir.filePath(QStringLiteral("debug")).toStdString()};
        Symbolizer symbolizer(debugOptions);
        checkInlineChain(binary.toStdString(), *m_target, &symbolizer);

        // The same stripped binary with no debug directory: nothing names the (unexported) function.
        Symbolizer::Options binOptions;
        binOptions.debugDirectories = {dir.filePath(QStringLiteral("bin")).toStdString()};
        Symbolizer without(binOptions);
        QCOMPARE(describe(without.symbolize(binary.toStdString(), id, offsetOf(*m_target, "emberline_mark_method"))),
                 QStringList());
    }

    // Stripped executable, debug file found by its .gnu_debuglink name under a debug directory: if this fails,
    // debug files installed without build-id links are missed.
    void separateDebugByDebuglink()
    {
        QTemporaryDir dir;
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("debug"))) &&
                QDir().mkpath(dir.filePath(QStringLiteral("bin"))));
        QVERIFY(copyFile(targetPath + ".debug", dir.filePath(QStringLiteral("debug/symbols_target.debug"))));
        const QString binary = dir.filePath(QStringLiteral("bin/symbols_target"));
        QVERIFY(copyFile(targetPath + ".stripped", binary));

        Symbolizer::Options debugOptions;
        debugOptions.debugDirectories = {dir.filePath(QStringLiteral("debug")).toStdString()};
        Symbolizer symbolizer(debugOptions);
        const auto frames =
            symbolizer.symbolize(binary.toStdString(), "", offsetOf(*m_target, "emberline_mark_method"));
        QCOMPARE(describe(frames),
                 QStringList{frameText("symbols::Shape::area(int) const", sourcePath("symbols_target.cpp"),
                                       findInSource("symbols_target.cpp", "LINE: method").line)});
    }

    // The vdso, through our own image: if this fails, every sample in clock_gettime & co. shows as an address.
    void vdso()
    {
        // The auxiliary vector hands the vdso's address over as an integer.
        // NOLINTNEXTLINE(performance-no-int-to-ptr)
        const auto *image = reinterpret_cast<const unsigned char *>(getauxval(AT_SYSINFO_EHDR));
        if (image == nullptr)
            QSKIP("this kernel maps no vdso");
        const auto vdsoImage = ElfTestImage::fromMemory(image, size_t{2} * 4096 * 4); // generous: reads headers only
        QVERIFY(vdsoImage);
        std::optional<uint64_t> offset = vdsoImage->symbolFileOffset("__vdso_clock_gettime");
        QVERIFY(offset);
        Symbolizer symbolizer;
        const auto frames = symbolizer.symbolizeVdso(*offset + 1);
        QCOMPARE(frames.size(), size_t(1));
        QVERIFY2(QString::fromStdString(frames[0].function).endsWith(QLatin1String("clock_gettime")),
                 frames[0].function.c_str());
        QCOMPARE(symbolizer.symbolizeVdso(1u << 30), std::vector<SymbolFrame>()); // past the image
    }

    // Offsets that name nothing: the ELF header, and beyond every segment. If this fails, the caller gets a
    // made-up name instead of writing `module+0xoffset`.
    void addressWithoutSymbol()
    {
        Symbolizer symbolizer;
        QCOMPARE(describe(symbolizer.symbolize(targetPath, "", 0)), QStringList());
        QCOMPARE(describe(symbolizer.symbolize(targetPath, "", uint64_t(1) << 40)), QStringList());
    }

    // If this fails, a library that disappeared (uninstalled, temporary) crashes or stalls the exporter.
    void nonexistentFile()
    {
        Symbolizer symbolizer;
        QCOMPARE(describe(symbolizer.symbolize("/nonexistent/libgone.so", "abcd", 0x1000)), QStringList());
        QCOMPARE(describe(symbolizer.symbolize("/dev/null", "", 0)), QStringList());
        QCOMPARE(describe(symbolizer.symbolize("/proc", "", 0)), QStringList());
        QCOMPARE(Symbolizer::readBuildId("/nonexistent/libgone.so"), std::string());
    }

    // Cut at several points (inside the ELF header, inside the program headers, in the middle of the sections):
    // if this fails, a corrupt file crashes the profiler.
    void truncatedElf()
    {
        QTemporaryDir dir;
        const qint64 size = QFileInfo(QString::fromStdString(targetPath)).size();
        const uint64_t method = offsetOf(*m_target, "emberline_mark_method");
        for (qint64 cut : {qint64(10), qint64(100), qint64(600), qint64(4096), size / 2, size - 100}) {
            const QString copy = dir.filePath(QStringLiteral("cut-%1").arg(cut));
            QVERIFY(copyFile(targetPath, copy, cut));
            Symbolizer symbolizer;
            const auto frames = symbolizer.symbolize(copy.toStdString(), "", method);
            // Whatever survives must not be garbage: a frame, if any, names the method.
            if (!frames.empty())
                QCOMPARE(frames.back().function, std::string("symbols::Shape::area(int) const"));
            (void)Symbolizer::readBuildId(copy.toStdString());
        }
        QCOMPARE(Symbolizer::readBuildId(dir.filePath(QStringLiteral("cut-10")).toStdString()), std::string());
    }

    // A path whose file was replaced since it was mapped: if this fails, samples of the old binary get names
    // from the new one.
    void changedFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("libreplaced.so"));
        QVERIFY(copyFile(libraryPath, path));
        const std::string oldId = Symbolizer::readBuildId(path.toStdString());
        QCOMPARE(oldId, m_library->buildId());
        QVERIFY(QFile::remove(path) && copyFile(noPiePath, path)); // now another ELF file

        Symbolizer symbolizer;
        const uint64_t offset = offsetOf(*m_library, "emberline_mark_library");
        QCOMPARE(describe(symbolizer.symbolize(path.toStdString(), oldId, offset)), QStringList());
        QCOMPARE(describe(symbolizer.symbolize(libraryPath, "0123456789abcdef", offset)), QStringList());
        // The caller's build id in upper case still matches.
        QString upper = QString::fromStdString(m_library->buildId()).toUpper();
        QCOMPARE(symbolizer.symbolize(libraryPath, upper.toStdString(), offset).size(), size_t(1));
    }

    // If this fails, build ids in mappings (and so the debug-file lookup keys) are wrong.
    void readBuildId()
    {
        QCOMPARE(Symbolizer::readBuildId(targetPath), m_target->buildId());
        QCOMPARE(Symbolizer::readBuildId(targetPath + ".stripped"), m_target->buildId());
        QCOMPARE(Symbolizer::readBuildId(libraryPath), m_library->buildId());
        QCOMPARE(Symbolizer::readBuildId(libraryPath).size(), size_t(40)); // --build-id=sha1
    }

    // If this fails, every flush symbolizes every address again (the cost the cache exists to avoid), or a
    // copy of the same binary under another path is symbolized twice.
    void cacheAnswersOncePerAddress()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("symbols_target_copy"));
        QVERIFY(copyFile(targetPath, copy));
        Symbolizer symbolizer;
        const uint64_t method = offsetOf(*m_target, "emberline_mark_method");
        const uint64_t leaf = offsetOf(*m_target, "emberline_mark_inline_leaf");
        QCOMPARE(symbolizer.cachedAddresses(), size_t(0));
        const auto first = symbolizer.symbolize(targetPath, m_target->buildId(), method);
        QCOMPARE(symbolizer.cachedAddresses(), size_t(1));
        QCOMPARE(symbolizer.symbolize(targetPath, m_target->buildId(), method), first);
        QCOMPARE(symbolizer.symbolize(copy.toStdString(), m_target->buildId(), method), first);
        QCOMPARE(symbolizer.cachedAddresses(), size_t(1));
        QCOMPARE(symbolizer.symbolize(targetPath, m_target->buildId(), leaf).size(), size_t(3));
        QCOMPARE(symbolizer.cachedAddresses(), size_t(2));
        symbolizer.symbolize(targetPath, "", 0); // empty answers are cached too
        QCOMPARE(symbolizer.cachedAddresses(), size_t(3));
    }

    // A module asked for no new address for kIdleFlushes flushes is closed, its answers kept; a new address
    // reopens it, and it then waits twice as long. If this fails, the debug information of every library the
    // program ever ran stays in memory for the session (libc's alone is 11 MB decompressed), or a closed module
    // loses its names.
    void idleModulesCloseAndReopen()
    {
        Symbolizer symbolizer;
        const uint64_t method = offsetOf(*m_target, "emberline_mark_method");
        const uint64_t leaf = offsetOf(*m_target, "emberline_mark_inline_leaf");
        const uint64_t library = offsetOf(*m_library, "emberline_mark_library");
        const auto first = symbolizer.symbolize(targetPath, m_target->buildId(), method);
        QCOMPARE(first.size(), size_t(1));
        const ModuleSymbols status = symbolizer.moduleSymbols(targetPath, m_target->buildId());
        QCOMPARE(status.status, SymbolStatus::FullDwarf);
        QCOMPARE(symbolizer.openModules(), size_t(1));
        for (uint32_t f = 0; f < Symbolizer::kIdleFlushes; ++f) {
            QCOMPARE(symbolizer.closeIdleModules(), size_t(0));
            QCOMPARE(symbolizer.symbolize(libraryPath, m_library->buildId(), library).size(), size_t(1));
        }
        // The library was in use at every flush; the target not since its first.
        QCOMPARE(symbolizer.closeIdleModules(), size_t(1));
        QCOMPARE(symbolizer.openModules(), size_t(1));
        // Asked again: the cached answer and status, without reopening.
        QCOMPARE(symbolizer.symbolize(targetPath, m_target->buildId(), method), first);
        QCOMPARE(symbolizer.moduleSymbols(targetPath, m_target->buildId()).status, status.status);
        QCOMPARE(symbolizer.openModules(), size_t(1));
        // A new address reopens it, with the same names as a fresh symbolizer gives.
        const auto inlined = symbolizer.symbolize(targetPath, m_target->buildId(), leaf);
        QCOMPARE(inlined.size(), size_t(3));
        QCOMPARE(inlined, Symbolizer().symbolize(targetPath, m_target->buildId(), leaf));
        QCOMPARE(symbolizer.openModules(), size_t(2));
        // Reopened once, it stays open for twice the idle flushes.
        for (uint32_t f = 0; f < 2 * Symbolizer::kIdleFlushes; ++f) {
            symbolizer.closeIdleModules();
            symbolizer.symbolize(libraryPath, m_library->buildId(), library + 1 + f);
        }
        QCOMPARE(symbolizer.openModules(), size_t(2));
        QCOMPARE(symbolizer.closeIdleModules(), size_t(1));
        QCOMPARE(symbolizer.openModules(), size_t(1));
    }

    // Ends the test slots: moc runs every private slot above as a test, and none below.
private: // NOLINT(readability-redundant-access-specifiers)
    void checkInlineChain(const std::string &path, const ElfTestImage &image, Symbolizer *shared = nullptr)
    {
        Symbolizer own;
        Symbolizer &symbolizer = shared != nullptr ? *shared : own;
        const auto frames = symbolizer.symbolize(path, image.buildId(), offsetOf(image, "emberline_mark_inline_leaf"));
        const SourcePosition leaf = findInSource("symbols_inline.h", "LINE: inline leaf", "EMBERLINE_MARK");
        // GCC records a call's column at its opening parenthesis, clang at the callee's name: either is the call.
        const SourcePosition callLeaf = findInSource("symbols_target.cpp", "CALL: inlinedLeaf", "(x + 2)");
        const SourcePosition callLeafName = findInSource("symbols_target.cpp", "CALL: inlinedLeaf", "inlinedLeaf(");
        const SourcePosition callMiddle = findInSource("symbols_target.cpp", "CALL: inlinedMiddle", "(x) + 7");
        const SourcePosition callMiddleName =
            findInSource("symbols_target.cpp", "CALL: inlinedMiddle", "inlinedMiddle(");
        QCOMPARE(describe(frames),
                 (QStringList{
                     frameText("symbols::inlinedLeaf(int)", sourcePath("symbols_inline.h"), leaf.line),
                     frameText("symbols::inlinedMiddle(int)", sourcePath("symbols_target.cpp"), callLeaf.line),
                     frameText("symbols::inlineCaller(int)", sourcePath("symbols_target.cpp"), callMiddle.line),
                 }));
        // Columns of the call sites: the call expressions themselves.
        QCOMPARE(frames[0].column, leaf.column);
        QVERIFY2(frames[1].column == callLeaf.column || frames[1].column == callLeafName.column,
                 qPrintable(QStringLiteral("column %1, the call is at %2 or %3")
                                .arg(frames[1].column)
                                .arg(callLeafName.column)
                                .arg(callLeaf.column)));
        QVERIFY2(frames[2].column == callMiddle.column || frames[2].column == callMiddleName.column,
                 qPrintable(QStringLiteral("column %1, the call is at %2 or %3")
                                .arg(frames[2].column)
                                .arg(callMiddleName.column)
                                .arg(callMiddle.column)));
    }

    std::optional<ElfTestImage> m_target;
    std::optional<ElfTestImage> m_noPie;
    std::optional<ElfTestImage> m_library;
};

QTEST_GUILESS_MAIN(TestSymbolizer)
#include "tst_symbolizer.moc"
