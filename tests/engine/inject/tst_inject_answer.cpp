// The injector helper's command line and answer line (engine/inject/inject_client.h), both ways: what the profiler
// asks is what the helper does, and what the helper answers is what the profiler reads, paths with spaces and
// error messages with line breaks included.

#include "engine/inject/inject_client.h"

#include <QTest>

using namespace emberline::engine;

class TestInjectAnswer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void argumentsRoundTrip()
    {
        InjectRequest r;
        r.pid = 1234;
        r.tid = 1240;
        r.library = "/opt/my lib/libagent.so";
        r.function = "agent_start";
        r.argument = "--mode=fast; two words\nand a line";
        r.loadIfMissing = false;
        auto back = parseInjectHelperArguments(injectHelperArguments(r));
        QVERIFY(back.ok());
        QCOMPARE(back->pid, r.pid);
        QCOMPARE(back->tid, r.tid);
        QCOMPARE(back->library, r.library);
        QCOMPARE(back->function, r.function);
        QCOMPARE(back->argument, r.argument);
        QCOMPARE(back->loadIfMissing, false);
        r.tid = 0;
        r.loadIfMissing = true;
        auto defaults = parseInjectHelperArguments(injectHelperArguments(r));
        QVERIFY(defaults.ok());
        QCOMPARE(defaults->tid, 0);
        QCOMPARE(defaults->loadIfMissing, true);
    }

    void badArguments()
    {
        QVERIFY(!parseInjectHelperArguments({"--pid", "12x", "--library", "a", "--function", "f"}).ok());
        QVERIFY(!parseInjectHelperArguments({"--library", "a", "--function", "f"}).ok()); // no pid
        QVERIFY(!parseInjectHelperArguments({"--pid", "5", "--library"}).ok());
        QVERIFY(!parseInjectHelperArguments({"--pid", "5", "--library", "a", "--function", "f", "--bogus", "1"}).ok());
    }

    void okAnswerRoundTrip()
    {
        InjectReport r;
        r.result = -17;
        r.libraryBase = 0x7f00deadb000;
        r.pathInTarget = "/tmp/emberline-inject/lib with space.so";
        r.stoppedNs = 1234567;
        r.tries = 3;
        r.loadedBefore = true;
        r.planNs = 11;
        r.safePointNs = 22;
        r.dlopenNs = 33;
        r.callNs = 44;
        const std::string line = formatInjectAnswer(r);
        QVERIFY(line.starts_with("ok result=-17 base=0x7f00deadb000 "));
        auto back = parseInjectAnswer(line);
        QVERIFY(back.ok());
        QCOMPARE(back->result, r.result);
        QCOMPARE(back->libraryBase, r.libraryBase);
        QCOMPARE(back->pathInTarget, r.pathInTarget);
        QCOMPARE(back->stoppedNs, r.stoppedNs);
        QCOMPARE(back->tries, r.tries);
        QCOMPARE(back->loadedBefore, true);
        QCOMPARE((std::vector<uint64_t>{back->planNs, back->safePointNs, back->dlopenNs, back->callNs}),
                 (std::vector<uint64_t>{11, 22, 33, 44}));
    }

    void errorAnswerRoundTrip()
    {
        const Result<InjectReport> error = makeError(Error::Code::Permission, "refused:\nptrace_scope is 3");
        const std::string line = formatInjectAnswer(error);
        QCOMPARE(line, std::string("error permission refused: ptrace_scope is 3"));
        auto back = parseInjectAnswer(line);
        QVERIFY(!back.ok());
        QCOMPARE(back.error().code, Error::Code::Permission);
        QCOMPARE(back.error().message, std::string("refused: ptrace_scope is 3"));
    }

    void garbledAnswer()
    {
        auto back = parseInjectAnswer("ok result=1");
        QVERIFY(!back.ok());
        QCOMPARE(back.error().code, Error::Code::Format);
    }
};

QTEST_GUILESS_MAIN(TestInjectAnswer)
#include "tst_inject_answer.moc"
