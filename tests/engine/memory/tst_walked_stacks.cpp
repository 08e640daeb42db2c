// A process image's walked stacks (engine/memory/walked_stacks.h): a stack written out with WalkDefines is kept and a
// later reference by its hash gets it back; a stack written out without it is handed on but not kept; a reference to
// a stack never written out is refused; a checked record's pcs are found behind its copy, and refused when they would
// not fit.

#include "engine/memory/walked_stacks.h"

#include <QTest>

#include <vector>

using namespace emberline;
using namespace emberline::engine;

class TstWalkedStacks : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void definedThenReferred()
    {
        WalkedStacks stacks;
        std::vector<uint64_t> pcs{0x401000, 0x402000, 0x403000};
        WalkedStack out;
        QVERIFY(stacks.resolve(7, agent::WalkDefines | agent::WalkTruncated, pcs, out));
        QVERIFY(out.truncated);
        QCOMPARE(out.hash, uint64_t(7));
        pcs.assign(3, 0); // the record's bytes are cleared once read: the kept stack is a copy
        QVERIFY(stacks.resolve(7, 0, {}, out));
        QCOMPARE(std::vector<uint64_t>(out.pcs.begin(), out.pcs.end()),
                 (std::vector<uint64_t>{0x401000, 0x402000, 0x403000}));
        QVERIFY(!out.truncated);

        // Written out without WalkDefines: handed on, not kept.
        const std::vector<uint64_t> other{0x500000};
        QVERIFY(stacks.resolve(9, 0, other, out));
        QCOMPARE(out.pcs.size(), size_t(1));
        QVERIFY(!stacks.resolve(9, 0, {}, out));
        QVERIFY(!stacks.resolve(11, 0, {}, out));
    }

    void checkedRecordsPcs()
    {
        // A record of 64 bytes whose last 16 are two pcs.
        alignas(8) uint8_t bytes[64] = {};
        auto *record = reinterpret_cast<agent::RecordHeader *>(bytes);
        record->bytes = 64;
        const uint64_t pcs[2] = {0x11, 0x22};
        std::memcpy(bytes + 48, pcs, sizeof pcs);
        const WalkedStack walk = checkedPcs(*record, 2, 40);
        QCOMPARE(walk.pcs.size(), size_t(2));
        QCOMPARE(walk.pcs[1], uint64_t(0x22));
        QVERIFY(checkedPcs(*record, 0, 40).pcs.empty());
        QVERIFY(checkedPcs(*record, 6, 40).pcs.empty()); // more than the body holds
    }
};

QTEST_APPLESS_MAIN(TstWalkedStacks)
#include "tst_walked_stacks.moc"
