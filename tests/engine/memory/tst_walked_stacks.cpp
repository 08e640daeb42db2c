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

    // A hash that names the Python frames too (WalkWithPython): the frames written with the stack are kept with it, and
    // a reference (which carries none) gets them back; a stack that names none leaves a reference's frames as they are.
    // If this fails, an exact-mode allocation seen before loses its Python frames, or takes another stack's.
    void pythonFramesNamedWithTheStack()
    {
        WalkedStacks stacks;
        const std::vector<uint64_t> pcs{0x401000, 0x402000};
        std::vector<agent::PythonFrame> frames{{0x7000, 12, agent::PythonFrameEntry}, {0x7100, 40, 0}};
        WalkedStack out;
        PythonFramesView python;
        python.frames = frames;
        python.flags = 0;
        QVERIFY(stacks.resolve(21, agent::WalkDefines | agent::WalkWithPython, pcs, out, &python));
        frames.assign(2, agent::PythonFrame{0, 0, 0}); // the record's bytes are cleared once read
        PythonFramesView reference;
        reference.image = 3;
        QVERIFY(stacks.resolve(21, agent::WalkWithPython, {}, out, &reference));
        QCOMPARE(reference.frames.size(), size_t(2));
        QCOMPARE(reference.frames[0].code, uint64_t(0x7000));
        QCOMPARE(reference.frames[0].instruction, 12);
        QCOMPARE(reference.frames[0].flags, uint32_t(agent::PythonFrameEntry));
        QCOMPARE(reference.frames[1].code, uint64_t(0x7100));
        QCOMPARE(reference.image, uint64_t(3));
        QCOMPARE(out.pcs.size(), size_t(2));

        // A stack kept without them: a reference keeps what its record carried.
        QVERIFY(stacks.resolve(22, agent::WalkDefines, pcs, out, &python));
        PythonFramesView own;
        const agent::PythonFrame mine{0x9000, 4, 0};
        own.frames = std::span<const agent::PythonFrame>(&mine, 1);
        QVERIFY(stacks.resolve(22, 0, {}, out, &own));
        QCOMPARE(own.frames.size(), size_t(1));
        QCOMPARE(own.frames[0].code, uint64_t(0x9000));
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
