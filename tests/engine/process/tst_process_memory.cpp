// The resident memory of a process tree (engine/process/process_memory.h), as the memory chart reads it: this
// process's own RSS, a child found in the tree and counted, and nothing for a process that is gone.

#include "engine/process/process_memory.h"

#include <QProcess>
#include <QTest>

#include <algorithm>
#include <vector>

#include <unistd.h>

using namespace emberline::engine;

class TestProcessMemory : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void residentBytesOfThisProcess()
    {
        // A test program maps at least a megabyte and surely less than a gigabyte.
        const int64_t own = residentBytes(static_cast<int>(getpid()));
        QVERIFY2(own > (1 << 20) && own < (int64_t(1) << 30), qPrintable(QString::number(own)));
        QCOMPARE(residentBytes(0), int64_t(-1));
    }

    // A child process is in this process's tree and its memory counts; once it is gone the root alone remains.
    // If this fails, the memory chart's RSS leaves out what a program's children hold.
    void treeFindsAndCountsAChild()
    {
        QProcess child;
        child.start(QStringLiteral("sleep"), {QStringLiteral("30")});
        QVERIFY(child.waitForStarted());
        const int childPid = static_cast<int>(child.processId());
        const std::vector<int> tree = processTree(static_cast<int>(getpid()));
        QCOMPARE(tree.front(), static_cast<int>(getpid()));
        QVERIFY(std::find(tree.begin(), tree.end(), childPid) != tree.end());
        ProcessTreeMemory memory(static_cast<int>(getpid()));
        const int64_t withChild = memory.residentBytes();
        QVERIFY(withChild >= residentBytes(static_cast<int>(getpid())) + residentBytes(childPid) / 2);
        child.kill();
        child.waitForFinished();
        QVERIFY(processTree(childPid).empty());
        ProcessTreeMemory gone(childPid);
        QCOMPARE(gone.residentBytes(), int64_t(-1));
    }
};

QTEST_GUILESS_MAIN(TestProcessMemory)
#include "tst_process_memory.moc"
