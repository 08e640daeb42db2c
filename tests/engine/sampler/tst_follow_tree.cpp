// The follow tree that decides which samples belong to the profiled program, fed with synthetic fork and exit
// records as the kernel writes them (times in ns, sometimes read out of order). If it fails, a profile holds
// samples of other processes (a neighbour's shell, readlink, basename), or loses the target's children.

#include "engine/sampler/follow_tree.h"

#include <QTest>

using namespace emberline::engine;

class TestFollowTree : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // The root counts from the start; strangers never do, whatever their time.
    void rootOnly()
    {
        FollowTree tree(100);
        QVERIFY(tree.follows(100, 0));
        QVERIFY(tree.follows(100, 5'000));
        QVERIFY(!tree.follows(200, 5'000));
        QVERIFY(!tree.follows(0, 5'000));
    }

    // Children and grandchildren of the root are followed from their fork on; a stranger's children are not.
    void descendantsFollowed()
    {
        FollowTree tree(100);
        tree.onFork(101, 100, 1'000);
        tree.onFork(102, 101, 2'000);
        tree.onFork(301, 300, 2'500); // a neighbour's shell forking readlink
        QVERIFY(tree.follows(101, 1'000));
        QVERIFY(tree.follows(102, 2'000));
        QVERIFY(!tree.follows(102, 1'999)); // before its fork, that pid was someone else's
        QVERIFY(!tree.follows(301, 3'000));
        QVERIFY(!tree.follows(300, 3'000));
        QCOMPARE(tree.size(), size_t(3));
    }

    // A new thread (pid == ppid) of a followed process changes nothing, nor does one of a stranger.
    void threadsDoNotAddProcesses()
    {
        FollowTree tree(100);
        tree.onFork(100, 100, 1'000);
        tree.onFork(300, 300, 1'000);
        QVERIFY(tree.follows(100, 2'000));
        QVERIFY(!tree.follows(300, 2'000));
        QCOMPARE(tree.size(), size_t(1));
    }

    // An exit record read before a sample of the same process (another CPU's buffer) does not drop that
    // sample; samples after the exit (the pid reused by a stranger) are dropped.
    void exitPrunesByTime()
    {
        FollowTree tree(100);
        tree.onFork(101, 100, 1'000);
        tree.onExit(101, 5'000);
        QVERIFY(tree.follows(101, 4'999));
        QVERIFY(tree.follows(101, 5'000));
        QVERIFY(!tree.follows(101, 5'001));
        // A second exit of the same pid (a late record) does not move the first one.
        tree.onExit(101, 9'000);
        QVERIFY(!tree.follows(101, 6'000));
    }

    // A pid reused by a followed fork is followed again from that fork; a child forked by a process after its
    // exit (a reused pid's fork) is not.
    void reusedPids()
    {
        FollowTree tree(100);
        tree.onFork(101, 100, 1'000);
        tree.onExit(101, 2'000);
        tree.onFork(102, 101, 3'000); // 101 is a stranger now
        QVERIFY(!tree.follows(102, 3'500));
        tree.onFork(101, 100, 4'000);
        QVERIFY(tree.follows(101, 4'500));
        QVERIFY(!tree.follows(101, 3'000));
    }

    // The root's exit ends it too: a later stranger with its pid is dropped.
    void rootExit()
    {
        FollowTree tree(100);
        tree.onExit(100, 7'000);
        QVERIFY(tree.follows(100, 6'000));
        QVERIFY(!tree.follows(100, 8'000));
    }

    // Pruning forgets only processes that exited before the given time, so the tree stays bounded over a long
    // session of short-lived children while live ones stay.
    void pruneKeepsLiveOnes()
    {
        FollowTree tree(100);
        for (uint32_t i = 0; i < 1000; ++i) {
            tree.onFork(1000 + i, 100, uint64_t{10} * i);
            tree.onExit(1000 + i, uint64_t{10} * i + 5);
        }
        tree.onFork(5000, 100, 20'000);
        QCOMPARE(tree.size(), size_t(1002));
        tree.prune(9'000);
        QCOMPARE(tree.size(), size_t(102)); // root, 5000, and the 100 that exited at 9'005 and later
        QVERIFY(tree.follows(1950, 9'502));
        tree.prune(30'000);
        QCOMPARE(tree.size(), size_t(2));
        QVERIFY(tree.follows(100, 30'000));
        QVERIFY(tree.follows(5000, 30'000));
    }
};

QTEST_GUILESS_MAIN(TestFollowTree)
#include "tst_follow_tree.moc"
