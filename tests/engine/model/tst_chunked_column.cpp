// The chunked sample columns that copies of a profile share (ChunkedColumn, ChunkedRows): a copy reads what
// the original held when it was taken, whatever the original writes afterwards, and the two share every chunk
// neither has written since. If this fails, a live session's held snapshot changes under a view, or every
// snapshot costs a full copy of the session's samples.

#include "engine/model/chunked_column.h"
#include "engine/model/profile.h"
#include "engine/model/stack_table.h"

#include <QTest>

#include <numeric>

using namespace emberline::engine;

class TestChunkedColumn : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Rows of three values across many chunks read back as written; a copy shares every chunk until one side
    // writes, and then only the written chunk (and, on append, the last one) is copied.
    void copiesShareUntouchedChunks()
    {
        ChunkedColumn<int64_t> column;
        column.setWidth(3);
        const size_t rows = 200'000; // 3 values a row: several 64 Ki-value chunks
        for (size_t i = 0; i < rows; ++i) {
            const int64_t row[] = {int64_t(i), int64_t(2 * i), -int64_t(i)};
            column.appendRow(row);
        }
        QCOMPARE(column.rows(), rows);
        for (size_t i : {size_t(0), size_t(21'845), size_t(21'846), rows - 1}) {
            QCOMPARE(column.row(i).size(), size_t(3));
            QCOMPARE(column.row(i)[1], int64_t(2 * i));
            QCOMPARE(column.row(i)[2], -int64_t(i));
        }
        ChunkedColumn<int64_t> copy = column;
        QCOMPARE(copy.row(5).data(), column.row(5).data()); // shared, not copied
        column.mutableRow(5)[0] += 1000;
        QCOMPARE(copy.row(5)[0], int64_t(5)); // the copy still reads what it held
        QCOMPARE(column.row(5)[0], int64_t(1005));
        QVERIFY(copy.row(5).data() != column.row(5).data());
        QCOMPARE(copy.row(rows / 2).data(), column.row(rows / 2).data()); // another chunk: still shared
        const int64_t extra[] = {7, 8, 9};
        column.appendRow(extra);
        QCOMPARE(copy.rows(), rows);
        QCOMPARE(column.rows(), rows + 1);
        QCOMPARE(column.row(rows)[2], int64_t(9));
        QCOMPARE(copy.row(rows - 1)[0], int64_t(rows - 1));
        // Once the copy is gone the column writes in place.
        const int64_t *before = column.row(rows / 2).data();
        copy = ChunkedColumn<int64_t>();
        column.mutableRow(rows / 2)[0] = -1;
        QCOMPARE(column.row(rows / 2).data(), before);
    }

    // Short rows are padded with zeros and long ones cut to the width; rows of width 0 hold nothing.
    void rowsTakeTheColumnsWidth()
    {
        ChunkedColumn<int64_t> column;
        column.setWidth(2);
        const int64_t one[] = {4};
        const int64_t three[] = {1, 2, 3};
        column.appendRow(one);
        column.appendRow(three);
        QCOMPARE(column.row(0)[1], int64_t(0));
        QCOMPARE(column.row(1)[1], int64_t(2));
        ChunkedColumn<int64_t> none;
        none.setWidth(0);
        none.appendRow(three);
        QCOMPARE(none.rows(), size_t(1));
        QVERIFY(none.row(0).empty());
    }

    // Rows of any length keep their values apart across chunk boundaries; a copy keeps its rows while the
    // original appends.
    void variableRowsAcrossChunks()
    {
        ChunkedRows<int> rows;
        std::vector<int> values;
        for (int i = 0; i < 10'000; ++i) {
            values.resize(size_t(i % 5));
            std::iota(values.begin(), values.end(), i);
            rows.appendRow(values);
        }
        const ChunkedRows<int> copy = rows;
        rows.appendRow(std::vector<int>{1, 2, 3});
        QCOMPARE(copy.rows(), size_t(10'000));
        QCOMPARE(rows.rows(), size_t(10'001));
        for (int i : {0, 1, 4, 4095, 4096, 4097, 9999}) {
            const auto row = copy.row(size_t(i));
            QCOMPARE(row.size(), size_t(i % 5));
            for (size_t k = 0; k < row.size(); ++k)
                QCOMPARE(row[k], i + int(k));
        }
        QCOMPARE(rows.row(10'000).size(), size_t(3));
    }

    // A copied profile keeps its samples' values while the original aggregates into them.
    void profileCopyKeepsItsValues()
    {
        Profile p;
        p.sampleTypes().push_back({p.intern("samples"), p.intern("count")});
        const uint32_t stack[] = {0};
        const int64_t one[] = {1};
        const Label label{p.intern("thread id"), 0, 42, 0};
        for (int i = 0; i < 100'000; ++i)
            p.addSample(stack, one, std::span<const Label>(&label, 1));
        const Profile snapshot = p;
        p.addToSampleValues(99'999, one);
        p.addSample(stack, one);
        QCOMPARE(snapshot.sampleCount(), size_t(100'000));
        QCOMPARE(snapshot.totals()[0], int64_t(100'000));
        QCOMPARE(p.totals()[0], int64_t(100'002));
        QCOMPARE(snapshot.sampleLabels(99'999)[0].num, int64_t(42));
        QVERIFY(p.sampleLabels(100'000).empty());
    }

    // If this fails, a copy of a stack table (a live snapshot's) copies the stacks instead of sharing them, or
    // a copy that goes on interning (its index left behind) gives a known stack a second id.
    void stackTableCopiesShareAndReintern()
    {
        StackTable table;
        std::vector<uint32_t> frames;
        for (uint32_t s = 0; s < 20'000; ++s) {
            frames.assign({s, s + 1, s % 7});
            QCOMPARE(table.intern(frames), s);
        }
        StackTable copy = table;
        QCOMPARE(copy.stack(12'345).data(), table.stack(12'345).data()); // shared, not copied
        QVERIFY(copy.memoryBytes() < table.memoryBytes());               // without the index
        frames.assign({12'345, 12'346, 12'345 % 7});
        QCOMPARE(copy.intern(frames), uint32_t(12'345)); // found again through the rebuilt index
        frames.assign({1, 2, 3, 4});
        QCOMPARE(copy.intern(frames), uint32_t(20'000)); // new in the copy only
        QCOMPARE(table.size(), size_t(20'000));
        QCOMPARE(table.intern(frames), uint32_t(20'000)); // the original's own, independent id
        QCOMPARE(copy.frameCount(), size_t(20'000 * 3 + 4));
    }

    // If this fails, every sample keeps its own copy of labels that the samples of a thread share (24 bytes a
    // label), or samples read back another sample's labels.
    void sharedLabelSetsAreKeptOnce()
    {
        Profile p;
        p.sampleTypes().push_back({p.intern("samples"), p.intern("count")});
        const int64_t one[] = {1};
        const StringId tid = p.intern("thread id");
        const StringId state = p.intern("thread state");
        const StringId running = p.intern("running");
        for (uint32_t i = 0; i < 100'000; ++i) {
            const uint32_t stack[] = {i};
            const Label labels[] = {{tid, 0, 1000 + int64_t(i % 8), 0}, {state, running, 0, 0}};
            p.addSample(stack, one, labels);
        }
        for (size_t i : {size_t(0), size_t(7), size_t(8), size_t(99'999)}) {
            QCOMPARE(p.sampleLabels(i).size(), size_t(2));
            QCOMPARE(p.sampleLabels(i)[0].num, int64_t(1000 + i % 8));
            QCOMPARE(p.sampleLabels(i)[1].str, running);
        }
        QCOMPARE(p.sampleLabels(3).data(), p.sampleLabels(11).data()); // one set for the thread
        // 8 sets of 2 labels, plus a word per sample: far under the 48 bytes a sample of separate labels.
        QVERIFY2(p.sampleMemoryBytes() < size_t(100'000) * 24, std::to_string(p.sampleMemoryBytes()).c_str());
    }
};

QTEST_GUILESS_MAIN(TestChunkedColumn)
#include "tst_chunked_column.moc"
