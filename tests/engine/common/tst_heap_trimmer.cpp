// HeapTrimmer (engine/common/heap_trimmer.h) on this process's real heap: pages freed within the slack stay
// resident for the next unit of work; past the slack they go back to the system.
#include "engine/common/heap_trimmer.h"

#include <QTest>

#include <cstring>

#include <malloc.h>
#include <memory>
#include <vector>

using namespace emberline::engine;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Allocates `bytes` in small blocks (from the allocator's heap, not separate mappings), touches every page and
// frees them again: the resident size keeps the freed pages until the heap is trimmed (initTestCase stops free()
// from shrinking the heap's top by itself).
void churn(size_t bytes)
{
    constexpr size_t kBlock = size_t(16) * 1024;
    std::vector<std::unique_ptr<char[]>> blocks;
    blocks.reserve(bytes / kBlock);
    for (size_t done = 0; done < bytes; done += kBlock) {
        blocks.emplace_back(new char[kBlock]);
        std::memset(blocks.back().get(), 1, kBlock);
    }
}

} // namespace

class TestHeapTrimmer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        // free() returns the heap's free top to the system by itself past a threshold; raised here, only the
        // trimmer gives pages back, as in a process whose heap top stays in use.
        if (!kAddressSanitizer)
            QVERIFY(::mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1);
    }

    // If this fails, the resident size cannot be read and the trimmer falls back to trimming after every unit of
    // work (correct, but every flush then faults in fresh pages).
    void readsTheResidentSize()
    {
        const size_t before = HeapTrimmer::residentBytes();
        QVERIFY(before > 0);
        std::vector<char> touched(32 * kMiB, 1);
        QVERIFY(HeapTrimmer::residentBytes() >= before + 16 * kMiB);
    }

    // If this fails, a trim happens while the process is within the slack (the next unit of work pays page faults
    // for nothing), or never happens past it (the resident size keeps every arena's high-water mark).
    void trimsOnlyPastTheSlack()
    {
        if (kAddressSanitizer)
            QSKIP("AddressSanitizer's allocator keeps freed blocks in quarantine and ignores malloc_trim: the "
                  "resident size cannot show a trim");
        HeapTrimmer trimmer(24 * kMiB);
        QVERIFY(!trimmer.afterWork()); // the first call only notes the baseline
        churn(8 * kMiB);
        QVERIFY(!trimmer.afterWork());
        const size_t beforeTrim = HeapTrimmer::residentBytes();
        churn(96 * kMiB);
        const size_t grown = HeapTrimmer::residentBytes();
        QVERIFY2(grown > beforeTrim + 48 * kMiB, "freed small blocks stay resident until a trim");
        QVERIFY(trimmer.afterWork());
        const size_t trimmed = HeapTrimmer::residentBytes();
        QVERIFY2(
            trimmed + 48 * kMiB < grown,
            qPrintable(
                QStringLiteral("%1 MiB resident after the trim, %2 before").arg(trimmed / kMiB).arg(grown / kMiB)));
        // The baseline is what remained after the trim: a unit of work within the slack does not trim again.
        churn(8 * kMiB);
        QVERIFY(!trimmer.afterWork());
    }
};

QTEST_GUILESS_MAIN(TestHeapTrimmer)
#include "tst_heap_trimmer.moc"
