// A process image's walked stacks (engine/memory/walked_stacks.h): a stack written out with WalkDefines is kept, with
// its Python frames, and a later reference by its hash gets both back; a stack written out without it is handed on
// but not kept; a reference to a stack never written out is refused; a checked record's pcs are found behind its copy,
// and refused when they would not fit.

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
        std::vector<agent::PythonFrame> frames{{0x7f0000001000, 12, 0}, {0x7f0000002000, -1, 3}};
        WalkedStack out;
        PythonFramesView python{frames, 5, 1};
        QVERIFY(stacks.resolve(7, agent::WalkDefines | agent::WalkTruncated, pcs, out, python));
        QVERIFY(out.truncated);
        QCOMPARE(out.hash, uint64_t(7));
        // The record's bytes are cleared once read: the kept stack and its Python frames are copies.
        pcs.assign(3, 0);
        frames.assign(2, agent::PythonFrame{0, 0, 0});
        PythonFramesView referred{{}, 0, 1};
        QVERIFY(stacks.resolve(7, 0, {}, out, referred));
        QCOMPARE(std::vector<uint64_t>(out.pcs.begin(), out.pcs.end()),
                 (std::vector<uint64_t>{0x401000, 0x402000, 0x403000}));
        QVERIFY(!out.truncated);
        QCOMPARE(referred.frames.size(), size_t(2));
        QCOMPARE(referred.frames[0].code, uint64_t(0x7f0000001000));
        QCOMPARE(referred.frames[0].instruction, 12);
        QCOMPARE(referred.frames[1].instruction, -1);
        QCOMPARE(referred.frames[1].flags, 3u);
        QCOMPARE(referred.flags, 5u);
        QCOMPARE(referred.image, uint64_t(1)); // the record's own

        // A stack defined with no Python frames gives a reference none.
        const std::vector<uint64_t> native{0x600000};
        PythonFramesView none{{}, 0, 1};
        QVERIFY(stacks.resolve(13, agent::WalkDefines, native, out, none));
        PythonFramesView again{{}, 0, 1};
        QVERIFY(stacks.resolve(13, 0, {}, out, again));
        QVERIFY(again.frames.empty());
        QCOMPARE(again.flags, 0u);

        // Written out without WalkDefines: handed on, not kept.
        const std::vector<uint64_t> other{0x500000};
        PythonFramesView view;
        QVERIFY(stacks.resolve(9, 0, other, out, view));
        QCOMPARE(out.pcs.size(), size_t(1));
        QVERIFY(!stacks.resolve(9, 0, {}, out, view));
        QVERIFY(!stacks.resolve(11, 0, {}, out, view));
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
