// The unwind tables kept between sessions (engine/unwind/unwind_table_store.h): a real module's table (the C
// library's) kept and read back equal, row for row and with its counts; a file cut short, with rows out of order, of
// another version or under a name that is not a build id is not read; the folder made when missing; and the table
// cache reads a kept table instead of building it.

#include "engine/unwind/elf_cache.h"
#include "engine/unwind/unwind_table_store.h"
#include "tests/engine/unwind/unwind_test_stacks.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>

using namespace emberline;
using namespace emberline::engine;

class TstUnwindTableStore : public QObject {
    Q_OBJECT

    std::shared_ptr<const ModuleUnwindTable> m_libc;
    std::string m_buildId;

private Q_SLOTS: // NOLINT(readability-redundant-access-specifiers): Q_SLOTS marks the section below for moc
    void initTestCase()
    {
        const std::string path = test::loadedModulePath("libc.so.6");
        QVERIFY(!path.empty());
        ElfCache elfs;
        const auto image = elfs.get(path);
        QVERIFY(image && !image->buildId().empty());
        m_buildId = image->buildId();
        auto built = buildUnwindTable(path, m_buildId);
        QVERIFY(built.ok());
        m_libc = built.value();
    }

    void keptAndReadBack()
    {
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString() + "/made/on/demand";
        QVERIFY(storeUnwindTable(folder, *m_libc));
        const auto back = loadStoredUnwindTable(folder, m_buildId, m_libc->path);
        QVERIFY(back);
        QVERIFY(back->stored);
        QCOMPARE(back->rows.size(), m_libc->rows.size());
        QVERIFY(std::memcmp(back->rows.data(), m_libc->rows.data(), back->rows.size() * sizeof(agent::UnwindRow)) == 0);
        QCOMPARE(back->stats.coveredBytes, m_libc->stats.coveredBytes);
        QCOMPARE(back->stats.rows, m_libc->stats.rows);
        QCOMPARE(back->buildId, m_buildId);
        // No other build id's table there.
        QVERIFY(!loadStoredUnwindTable(folder, "00ff", m_libc->path));
        // A name that is not a build id is neither kept nor read (it could name a path).
        ModuleUnwindTable odd = *m_libc;
        odd.buildId = "../x";
        QVERIFY(!storeUnwindTable(folder, odd));
        QVERIFY(!loadStoredUnwindTable(folder, "../x", m_libc->path));
    }

    void damagedFilesAreNotRead()
    {
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString();
        QVERIFY(storeUnwindTable(folder, *m_libc));
        const QString file = QString::fromStdString(folder + "/" + m_buildId + ".v" +
                                                    std::to_string(agent::kUnwindTableVersion) + ".rows");
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray whole = f.readAll();
        f.close();
        const auto rewrite = [&](const QByteArray &bytes) {
            QFile out(file);
            QVERIFY(out.open(QIODevice::WriteOnly | QIODevice::Truncate));
            out.write(bytes);
        };
        // Cut short.
        rewrite(whole.left(whole.size() - 8));
        QVERIFY(!loadStoredUnwindTable(folder, m_buildId, m_libc->path));
        // Two rows swapped: not sorted.
        QByteArray swapped = whole;
        const qsizetype rowsAt = swapped.size() - qsizetype(m_libc->rows.size() * sizeof(agent::UnwindRow));
        const QByteArray first = swapped.mid(rowsAt + 80, 8);
        swapped.replace(rowsAt + 80, 8, swapped.mid(rowsAt + 88, 8));
        swapped.replace(rowsAt + 88, 8, first);
        rewrite(swapped);
        QVERIFY(!loadStoredUnwindTable(folder, m_buildId, m_libc->path));
        // Another version of the file.
        QByteArray other = whole;
        other[4] = char(other[4] + 1);
        rewrite(other);
        QVERIFY(!loadStoredUnwindTable(folder, m_buildId, m_libc->path));
        // Whole again: read.
        rewrite(whole);
        QVERIFY(loadStoredUnwindTable(folder, m_buildId, m_libc->path));
    }

    // The session's cache reads a kept table rather than building it, and keeps what it builds.
    void cacheUsesTheStore()
    {
        QTemporaryDir dir;
        const std::string folder = dir.path().toStdString();
        ElfCache elfs;
        {
            UnwindTableCache first(elfs, folder);
            auto built = first.get(m_libc->path);
            QVERIFY(built.ok());
            QVERIFY(!built.value()->stored);
        }
        UnwindTableCache second(elfs, folder);
        auto read = second.get(m_libc->path);
        QVERIFY(read.ok());
        QVERIFY(read.value()->stored);
        QCOMPARE(read.value()->rows.size(), m_libc->rows.size());
    }
};

QTEST_GUILESS_MAIN(TstUnwindTableStore)
#include "tst_unwind_table_store.moc"
