// The agent's walk of CPython's frames (engine/agent/python/agent_python.h). In a live interpreter, for every installed
// CPython with a shared libpython: python_host embeds it and runs python_walk.py, whose probes call back into the host
// through ctypes from a method, a function called through map (C), a second thread, a generator driven by next() and
// an asyncio coroutine; the agent's frames, named from pythonCodeFacts and the line table, must be the interpreter's
// own (name, file, line, in order), with the eval loop's entries where C called into Python. A thread Python never
// saw must find no thread state. Without Python: hand-made chains that loop, hold garbage or run past the bound are
// cut or truncated, never followed; the code facts are cut to the room. Were this wrong, the agent's samples would
// name wrong functions or lines, or a sample would crash the profiled program.

#include "engine/agent/python/agent_python.h"
#include "tests/engine/python/python_installs.h"

#include <QProcess>
#include <QTest>

#include <pthread.h>

#include <cstring>
#include <memory>
#include <vector>

using namespace emberline;
using emberline::test::PythonInstall;

namespace {

// The shared libpython an install was built with, when it is there (pyenv's builds have one; a distribution's
// interpreter may be linked statically and come with a libpython of the same version from its -dev package).
QString sharedLibraryOf(const PythonInstall &install)
{
    QProcess p;
    p.start(install.interpreter,
            {QStringLiteral("-c"), QStringLiteral("import sysconfig; v = sysconfig.get_config_var; "
                                                  "print(v('LIBDIR') or ''); print(v('INSTSONAME') or ''); "
                                                  "print(v('LDLIBRARY') or '')")});
    if (!p.waitForFinished(20000) || p.exitCode() != 0)
        return {};
    const QStringList lines = QString::fromLocal8Bit(p.readAllStandardOutput()).split(QLatin1Char('\n'));
    if (lines.size() < 3)
        return {};
    for (const QString &name : {lines[1], lines[2]}) {
        const QFileInfo file(lines[0] + QLatin1Char('/') + name);
        if (name.contains(QLatin1String(".so")) && file.exists())
            return file.canonicalFilePath();
    }
    return {};
}

struct Probe {
    QStringList truth; // NAME FILE LINE EXPECT
    QStringList walk;  // NAME FILE LINE ENTRY
    uint32_t flags = 0;
};

// A hand-made interpreter in a zeroed buffer, laid out as `layout` says: one interpreter, one thread state of the
// calling thread, frames of one code object.
struct FakeInterpreter {
    engine::PythonLayout layout;
    std::vector<uint64_t> memory = std::vector<uint64_t>(1 << 16);
    uint64_t codeType = 0;

    uint64_t at(size_t word) { return reinterpret_cast<uint64_t>(memory.data() + word); }
    template <typename T> void put(uint64_t address, uint32_t offset, T value)
    {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): the hand-made objects are written where the walk reads them
        std::memcpy(reinterpret_cast<void *>(address + offset), &value, sizeof value);
    }
    // Word offsets of each part in the buffer.
    static constexpr size_t kRuntime = 0, kInterp = 512, kThread = 4096, kCode = 8192, kType = 9000, kFrames = 10000;
    static constexpr size_t kFrameWords = 32;

    explicit FakeInterpreter(const engine::PythonLayout &l) : layout(l)
    {
        codeType = at(kType);
        put(at(kRuntime), l.runtimeInterpretersHead, at(kInterp));
        put(at(kInterp), l.interpThreadsHead, at(kThread));
        put(at(kThread), l.threadId, static_cast<uint64_t>(pthread_self()));
        put(at(kCode), l.objectType, codeType);
    }
    uint64_t frame(int i) { return at(kFrames + size_t(i) * kFrameWords); }
    // A chain of `n` frames, the leaf first; the last one's previous is `last` (0: the chain ends).
    void chain(int n, uint64_t last)
    {
        put(at(kThread), layout.threadFrame, frame(0));
        for (int i = 0; i < n; ++i) {
            put(frame(i), layout.framePrevious, i + 1 < n ? frame(i + 1) : last);
            put(frame(i), layout.frameCode, at(kCode));
            put(frame(i), layout.frameInstruction, int32_t(-1));
        }
    }
    agent::PythonTarget target()
    {
        agent::PythonTarget t;
        t.layout = layout;
        t.runtime = at(kRuntime);
        t.codeType = codeType;
        return t;
    }
};

// Chains of hand-made 3.12 frames (frame 2 a shim owned by the C stack), walked with the thread's memo and without:
// walkBoth gives the count where both walks gave the same frames and flags, -1 where they differ.
struct MemoChains : FakeInterpreter {
    const engine::PythonLayout &l = engine::kPython312;
    std::unique_ptr<agent::PythonCodeMemo> memo = std::make_unique<agent::PythonCodeMemo>();
    agent::PythonThreadCache cache{};
    uint64_t code = 0;
    uint64_t cframe = 0;

    MemoChains() : FakeInterpreter(engine::kPython312)
    {
        code = at(kCode);
        put(code, l.codeFirstTraceable, int32_t(0));
        put(code, l.bytesSize, int64_t(100)); // code units
        cframe = at(kThread + 64);
        put(at(kThread), l.threadCframe, cframe);
        for (int i = 0; i < 8; ++i) {
            put(frame(i), l.frameCode, code);
            move(i, i + 1);
            put(frame(i), l.frameOwner, uint8_t(i == 2 ? l.ownerCStack : 0));
            link(i, -1);
        }
    }
    void link(int i, int previous) { put(frame(i), l.framePrevious, previous < 0 ? uint64_t(0) : frame(previous)); }
    void move(int i, int unit) { put(frame(i), l.frameInstruction, code + l.codeCodeAdaptive + uint64_t(unit) * 2); }
    int walkBoth(int leaf)
    {
        put(cframe, l.cframeCurrentFrame, frame(leaf));
        const agent::PythonTarget t = target();
        agent::PythonFrame kept[16];
        agent::PythonFrame anew[16];
        uint64_t keptAt[16] = {};
        uint32_t keptFlags = 0;
        uint32_t anewFlags = 0;
        const int n = agent::pythonWalk(t, cache, kept, agent::kMaxPythonFrames, keptFlags, keptAt, 16, memo.get());
        const int m = agent::pythonWalk(t, cache, anew, 16, anewFlags);
        if (n != m || keptFlags != anewFlags)
            return -1;
        for (int i = 0; i < n; ++i)
            if (kept[i].code != anew[i].code || kept[i].instruction != anew[i].instruction ||
                kept[i].flags != anew[i].flags)
                return -1;
        return n;
    }
};

} // namespace

class TestAgentPython : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void live_data()
    {
        QTest::addColumn<QString>("library");
        QTest::addColumn<int>("minor");
        QStringList seen;
        const std::vector<PythonInstall> installs = emberline::test::findPythonInstalls();
        for (int minor = 8; minor <= 13; ++minor) {
            bool found = false;
            for (const PythonInstall &p : installs) {
                const QString library = p.minor == minor ? sharedLibraryOf(p) : QString();
                if (library.isEmpty() || seen.contains(library))
                    continue;
                seen << library;
                found = true;
                QTest::newRow(qPrintable(p.version + QLatin1Char(' ') + library)) << library << minor;
            }
            if (!found)
                qInfo("no CPython 3.%d with a shared libpython is installed: it is not walked here", minor);
        }
        if (seen.isEmpty())
            QTest::newRow("none") << QString() << 0;
    }

    void live()
    {
        QFETCH(QString, library);
        QFETCH(int, minor);
        if (library.isEmpty())
            QSKIP("no CPython 3.8-3.13 with a shared libpython is installed (pyenv or the distribution's)");
        QProcess host;
        host.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // Under a sanitizer (the ASan build), the embedded interpreter's own blocks left at its end are not a leak
        // of the walk's.
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("ASAN_OPTIONS"),
                           environment.value(QStringLiteral("ASAN_OPTIONS")) + QStringLiteral(":detect_leaks=0"));
        host.setProcessEnvironment(environment);
        host.start(QStringLiteral(EMBERLINE_PYTHON_HOST),
                   {library, QStringLiteral(EMBERLINE_AGENT_TESTS "/python_walk.py")});
        QVERIFY(host.waitForFinished(120000));
        const QStringList lines = QString::fromUtf8(host.readAllStandardOutput()).split(QLatin1Char('\n'));
        QCOMPARE(host.exitCode(), 0);

        QMap<QString, Probe> probes;
        QString current;
        bool timed = false, noThread = false;
        for (const QString &line : lines) {
            const QString rest = line.section(QLatin1Char(' '), 1);
            if (line.startsWith(QLatin1String("python ")))
                qInfo("%s", qPrintable(line));
            else if (line.startsWith(QLatin1String("probe ")))
                current = rest;
            else if (line.startsWith(QLatin1String("truth ")))
                probes[current].truth << rest;
            else if (line.startsWith(QLatin1String("walk ")))
                probes[current].walk << rest;
            else if (line.startsWith(QLatin1String("flags ")))
                probes[current].flags = rest.toUInt();
            else if (line.startsWith(QLatin1String("timing "))) {
                const QStringList t = rest.split(QLatin1Char(' '));
                QCOMPARE(t.size(), 4);
                qInfo("3.%d: walk of %s frames: median %s ns, p99 %s ns", minor, qPrintable(t[0]), qPrintable(t[1]),
                      qPrintable(t[2]));
                QVERIFY(t[0].toInt() > 100); // deep(100) and the frames below it
                QCOMPARE(t[3].toUInt(), 0u);
                timed = true;
            } else if (line.startsWith(QLatin1String("nothread "))) {
                QCOMPARE(rest, QStringLiteral("0 %1").arg(agent::PythonWalkNoThread));
                noThread = true;
            }
        }
        QVERIFY(timed);
        QVERIFY(noThread);
        for (const QString &label : {QStringLiteral("main"), QStringLiteral("thread"), QStringLiteral("generator"),
                                     QStringLiteral("coroutine")}) {
            QVERIFY2(probes.contains(label), qPrintable(label));
            const Probe &p = probes[label];
            QCOMPARE(p.flags, 0u);
            QVERIFY(!p.truth.isEmpty());
            QStringList truth, walk;
            for (const QString &t : p.truth)
                truth << t.section(QLatin1Char('\t'), 0, 2);
            for (const QString &w : p.walk)
                walk << w.section(QLatin1Char('\t'), 0, 2);
            if (walk != truth)
                qWarning("%s:\n  truth %s\n  walk  %s", qPrintable(label),
                         qPrintable(truth.join(QLatin1String("\n  "))), qPrintable(walk.join(QLatin1String("\n  "))));
            QCOMPARE(walk, truth);
            for (int i = 0; i < p.walk.size(); ++i) {
                const bool entry = p.walk[i].section(QLatin1Char('\t'), 3) == QLatin1String("1");
                const QString expect = p.truth[i].section(QLatin1Char('\t'), 3);
                const QByteArray what = (label + QLatin1String(": ") + p.walk[i]).toUtf8();
                if (minor < 11)
                    QVERIFY2(entry, what.constData()); // one call of the eval loop a frame
                else if (expect == QLatin1String("E"))
                    QVERIFY2(entry, what.constData());
                else if (expect == QLatin1String("P"))
                    QVERIFY2(!entry, what.constData());
            }
        }
    }

    // A runtime whose interpreter list is empty (a zeroed buffer) and one of garbage: no thread, no frame.
    void garbageRuntime()
    {
        std::vector<uint64_t> zeros(4096);
        std::vector<uint64_t> garbage(4096, 0x4141414141414141ull);
        for (const engine::PythonLayout *l : {&engine::kPython38, &engine::kPython312, &engine::kPython313}) {
            for (std::vector<uint64_t> *buffer : {&zeros, &garbage}) {
                agent::PythonTarget target;
                target.layout = *l;
                target.runtime = reinterpret_cast<uint64_t>(buffer->data());
                agent::PythonThreadCache cache{};
                agent::PythonFrame frames[8];
                uint32_t flags = 0;
                QCOMPARE(agent::pythonWalk(target, cache, frames, 8, flags), 0);
                QCOMPARE(flags, uint32_t(agent::PythonWalkNoThread));
            }
        }
    }

    // Hand-made chains: the frames given up to a loop or a wrong code object, then cut; a chain past the bound
    // truncated; a stale cached thread state found anew.
    void handMadeChains()
    {
        FakeInterpreter fake(engine::kPython310);
        agent::PythonTarget target = fake.target();
        agent::PythonThreadCache cache{};
        std::vector<agent::PythonFrame> frames(agent::kMaxPythonFrames);
        uint32_t flags = 0;

        fake.chain(3, 0);
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags), 3);
        QCOMPARE(flags, 0u);
        QCOMPARE(cache.threadState, fake.at(FakeInterpreter::kThread));
        QCOMPARE(frames[0].code, fake.at(FakeInterpreter::kCode));
        QCOMPARE(frames[0].instruction, -1);
        QCOMPARE(frames[2].flags, uint32_t(agent::PythonFrameEntry));
        // The frames' addresses, where asked, for as many as there is room (the agent's memo of described code).
        uint64_t addresses[2] = {};
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags, addresses, 2), 3);
        QCOMPARE(addresses[0], fake.frame(0));
        QCOMPARE(addresses[1], fake.frame(1));

        fake.chain(3, fake.frame(1)); // the last frame's previous is the second: a loop
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags), 3);
        QCOMPARE(flags, uint32_t(agent::PythonWalkCut));

        fake.chain(3, fake.frame(0) + 4); // misaligned
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags), 3);
        QCOMPARE(flags, uint32_t(agent::PythonWalkCut));

        fake.chain(300, 0);
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags),
                 agent::kMaxPythonFrames);
        QCOMPARE(flags, uint32_t(agent::PythonWalkTruncated));
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), 10, flags), 10);
        QCOMPARE(flags, uint32_t(agent::PythonWalkTruncated));

        target.codeType += 8; // not PyCode_Type
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags), 0);
        QCOMPARE(flags, uint32_t(agent::PythonWalkCut));
        target.codeType -= 8;

        // The cached thread state now says another thread: found anew, or not at all.
        fake.put(fake.at(FakeInterpreter::kThread), fake.layout.threadId, uint64_t(1));
        QCOMPARE(agent::pythonWalk(target, cache, frames.data(), agent::kMaxPythonFrames, flags), 0);
        QCOMPARE(flags, uint32_t(agent::PythonWalkNoThread));
        QCOMPARE(cache.threadState, 0u);
    }

    // A thread in a subinterpreter holds a thread state in each interpreter (one thread id): the walk reads every
    // interpreter's list, the running state's chain first (the GIL holder's, to 3.11), then the other's, rootward; the
    // chain before each next one ends at its entry frame. Another thread's state is not taken, and nothing is cached.
    void twoInterpreters()
    {
        const engine::PythonLayout &l = engine::kPython310;
        FakeInterpreter fake(l);
        using F = FakeInterpreter;
        const uint64_t self = static_cast<uint64_t>(pthread_self());
        const uint64_t main = fake.at(F::kInterp), sub = fake.at(F::kInterp + 256);
        const uint64_t mainState = fake.at(F::kThread), subState = fake.at(F::kThread + 1024);
        const uint64_t otherState = fake.at(F::kThread + 2048);         // another thread's, in the subinterpreter
        fake.put(fake.at(F::kRuntime), l.runtimeInterpretersHead, sub); // the newest first
        fake.put(sub, l.interpNext, main);
        fake.put(sub, l.interpThreadsHead, otherState);
        fake.put(otherState, l.threadId, self + 1);
        fake.put(otherState, l.threadNext, subState);
        fake.put(subState, l.threadId, self);
        const uint64_t code = fake.at(F::kCode);
        // Frames 0-1 the main interpreter's (0 the leaf), 2-3 the subinterpreter's.
        fake.put(mainState, l.threadFrame, fake.frame(0));
        fake.put(subState, l.threadFrame, fake.frame(2));
        for (int i = 0; i < 4; ++i) {
            fake.put(fake.frame(i), l.framePrevious, i % 2 == 0 ? fake.frame(i + 1) : uint64_t(0));
            fake.put(fake.frame(i), l.frameCode, code);
            fake.put(fake.frame(i), l.frameInstruction, int32_t(-1));
        }
        agent::PythonTarget target = fake.target();
        agent::PythonThreadCache cache{};
        agent::PythonFrame frames[8];
        uint32_t flags = 0;
        const auto walked = [&] { return agent::pythonWalk(target, cache, frames, 8, flags); };
        // The subinterpreter runs (its state holds the GIL): its frames, then the main interpreter's that entered it.
        fake.put(fake.at(F::kRuntime), l.runtimeThreadCurrent, subState);
        QCOMPARE(walked(), 4);
        QCOMPARE(flags, 0u);
        QCOMPARE(cache.threadState, 0u);
        for (int i = 0; i < 4; ++i)
            QCOMPARE(frames[i].flags, uint32_t(agent::PythonFrameEntry)); // 3.10: each frame its own eval call
        // The walk went frame(2), frame(3), frame(0), frame(1): told apart by their instructions.
        const uint64_t bytecode = fake.at(F::kCode + 128);
        fake.put(code, l.codeCode, bytecode);
        fake.put(bytecode, l.bytesSize, int64_t(64));
        for (int i = 0; i < 4; ++i)
            fake.put(fake.frame(i), l.frameInstruction, int32_t(2 * i));
        QCOMPARE(walked(), 4);
        const int32_t subFirst[4] = {4, 6, 0, 2};
        for (int i = 0; i < 4; ++i)
            QCOMPARE(frames[i].instruction,
                     subFirst[i] * (l.instruction == engine::InstructionKind::LastiBytes ? 1 : 2));
        // The main interpreter's state runs again (the subinterpreter's call returned, its state not yet freed).
        fake.put(fake.at(F::kRuntime), l.runtimeThreadCurrent, mainState);
        QCOMPARE(walked(), 4);
        const int32_t mainFirst[4] = {0, 2, 4, 6};
        for (int i = 0; i < 4; ++i)
            QCOMPARE(frames[i].instruction,
                     mainFirst[i] * (l.instruction == engine::InstructionKind::LastiBytes ? 1 : 2));
        QCOMPARE(cache.threadState, 0u);
        // One interpreter again: the main state alone, and cached.
        fake.put(fake.at(F::kRuntime), l.runtimeInterpretersHead, main);
        QCOMPARE(walked(), 2);
        QCOMPARE(cache.threadState, mainState);
    }

    // 3.12's shims: left out, the frame above one marked as an entry; a frame not started yet left out too.
    void shimsAndIncompleteFrames()
    {
        const engine::PythonLayout &l = engine::kPython312;
        FakeInterpreter fake(l);
        const uint64_t code = fake.at(FakeInterpreter::kCode);
        fake.put(code, l.codeFirstTraceable, int32_t(2));
        fake.put(code, l.bytesSize, int64_t(100)); // code units
        // leaf: not started (incomplete); 1: running at unit 10; 2: a shim; 3: running at unit 4, the bottom.
        fake.put(fake.at(FakeInterpreter::kThread), l.threadCframe, fake.at(FakeInterpreter::kThread + 64));
        fake.put(fake.at(FakeInterpreter::kThread + 64), l.cframeCurrentFrame, fake.frame(0));
        const uint64_t units = code + l.codeCodeAdaptive;
        const int32_t at[4] = {0, 10, 0, 4};
        for (int i = 0; i < 4; ++i) {
            fake.put(fake.frame(i), l.framePrevious, i < 3 ? fake.frame(i + 1) : uint64_t(0));
            fake.put(fake.frame(i), l.frameCode, code);
            fake.put(fake.frame(i), l.frameInstruction, units + uint64_t(at[i]) * 2);
            fake.put(fake.frame(i), l.frameOwner, uint8_t(i == 2 ? l.ownerCStack : 0));
        }
        agent::PythonTarget target = fake.target();
        agent::PythonThreadCache cache{};
        agent::PythonFrame frames[8];
        uint32_t flags = 0;
        QCOMPARE(agent::pythonWalk(target, cache, frames, 8, flags), 2);
        QCOMPARE(flags, 0u);
        QCOMPARE(frames[0].instruction, 20);
        QCOMPARE(frames[0].flags, uint32_t(agent::PythonFrameEntry)); // its previous is the shim
        QCOMPARE(frames[1].instruction, 8);
        QCOMPARE(frames[1].flags, 0u); // no shim below it in this hand-made chain
    }

    // The thread's memo of its last chain (agent_python.h's PythonCodeMemo): a chain whose leaf changed (a call made,
    // a return, a new frame above an eval loop's shim) is walked from its new leaf into the kept chain and the rest
    // given again; a frame moved or cut rootward is walked anew. Each walk with the memo gives what a walk without it
    // gives, flags included. If this fails, a walk that joined the kept chain gave its frames or entry flags wrong.
    void keptChainSpliced()
    {
        MemoChains fake;
        // 1 -> 3 -> shim 2 -> 4 -> 5, then ends.
        fake.link(1, 3);
        fake.link(3, 2);
        fake.link(2, 4);
        fake.link(4, 5);
        QCOMPARE(fake.walkBoth(1), 4);
        QCOMPARE(fake.walkBoth(1), 4);
        QVERIFY(fake.memo->repeated);
        fake.link(0, 1); // a call from frame 1
        QCOMPARE(fake.walkBoth(0), 5);
        QVERIFY(fake.memo->repeated);
        QCOMPARE(fake.walkBoth(3), 3); // two returns
        fake.link(6, 2);               // a new frame above the shim: the eval loop's first, an entry
        QCOMPARE(fake.walkBoth(6), 3);
        fake.link(7, 6);
        fake.move(4, 40); // a call, and a rootward frame moved on too
        QCOMPARE(fake.walkBoth(7), 4);
        fake.link(4, 1); // a rootward frame's previous changed: walked anew
        fake.link(1, -1);
        QCOMPARE(fake.walkBoth(7), 4);
        QCOMPARE(fake.walkBoth(7), 4);
    }

    // The facts of a hand-made code object: an ASCII name, a 2-byte file name, a line table; cut to a small room.
    void codeFacts()
    {
        const engine::PythonLayout &l = engine::kPython312;
        FakeInterpreter fake(l);
        const uint64_t code = fake.at(FakeInterpreter::kCode);
        const uint64_t name = fake.at(20000), file = fake.at(20100), table = fake.at(20200);
        fake.put(code, l.codeQualname, name);
        fake.put(code, l.codeFilename, file);
        fake.put(code, l.codeLineTable, table);
        fake.put(code, l.codeFirstLineno, int32_t(42));
        fake.put(name, l.unicodeLength, int64_t(3));
        fake.put(name, l.unicodeState, uint32_t(l.unicodeCompactBit | l.unicodeAsciiBit | (1u << l.unicodeKindShift)));
        // NOLINTBEGIN(performance-no-int-to-ptr): the hand-made objects are written at the addresses the walk reads
        std::memcpy(reinterpret_cast<void *>(name + l.unicodeAsciiData), "hot", 3);
        fake.put(file, l.unicodeLength, int64_t(2));
        fake.put(file, l.unicodeState, uint32_t(l.unicodeCompactBit | (2u << l.unicodeKindShift)));
        const char16_t fileText[2] = {u'\u00e9', u'\u4e2d'};
        std::memcpy(reinterpret_cast<void *>(file + l.unicodeCompactData), fileText, sizeof fileText);
        fake.put(table, l.bytesSize, int64_t(5));
        std::memcpy(reinterpret_cast<void *>(table + l.bytesData), "\x80\x01\x02\x03\x04", 5);
        // NOLINTEND(performance-no-int-to-ptr)
        const agent::PythonTarget target = fake.target();

        uint8_t out[256];
        const size_t n = agent::pythonCodeFacts(target, code, out, sizeof out);
        agent::PythonCodeFacts facts{};
        QCOMPARE(n, sizeof facts + 3 + 4 + 5);
        std::memcpy(&facts, out, sizeof facts);
        QCOMPARE(facts.code, code);
        QCOMPARE(facts.tag, agent::pythonCodeTag(target, code));
        QVERIFY(facts.tag != 0);
        QCOMPARE(facts.firstLine, 42);
        QCOMPARE(facts.nameBytes, 3u);
        QCOMPARE(facts.nameKind, uint8_t(1));
        QCOMPARE(facts.fileBytes, 4u);
        QCOMPARE(facts.fileKind, uint8_t(2));
        QCOMPARE(facts.lineTableBytes, 5u);
        QCOMPARE(facts.cut, uint8_t(0));
        QCOMPARE(std::memcmp(out + sizeof facts, "hot", 3), 0);
        QCOMPARE(std::memcmp(out + sizeof facts + 3, fileText, 4), 0);

        // Room for the header, the name and one byte more: the file cut to whole characters (none), no table.
        const size_t small = agent::pythonCodeFacts(target, code, out, sizeof facts + 4);
        std::memcpy(&facts, out, sizeof facts);
        QCOMPARE(small, sizeof facts + 3);
        QCOMPARE(facts.fileBytes, 0u);
        QCOMPARE(facts.lineTableBytes, 0u);
        QCOMPARE(facts.cut, uint8_t(1));
        QCOMPARE(agent::pythonCodeFacts(target, code, out, sizeof facts - 1), size_t(0));

        // Another file name object: another tag. A code object of another type: no facts, no tag.
        const uint32_t tag = agent::pythonCodeTag(target, code);
        fake.put(code, l.codeFilename, name);
        QVERIFY(agent::pythonCodeTag(target, code) != tag);
        fake.put(code, l.objectType, uint64_t(0));
        QCOMPARE(agent::pythonCodeTag(target, code), 0u);
        QCOMPARE(agent::pythonCodeFacts(target, code, out, sizeof out), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestAgentPython)
#include "tst_agent_python.moc"
