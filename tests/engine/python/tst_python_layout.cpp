// The structure layouts against CPython's own headers: for every installed CPython 3.8-3.13 whose headers are there,
// a small C probe is compiled at test time against that version's headers (with Py_BUILD_CORE, for the internal
// ones) and prints offsetof() of each field of Emberline's table; every value must match, and every field the
// version does not have must be absent from the table. A wrong offset here would make the stack reader follow
// garbage pointers in every profiled Python program of that version. Also the 3.13 debug offsets as laid out here.

#include "engine/agent/python/python_layout.h"
#include "engine/python/python_layout_choice.h"
#include "tests/engine/python/python_installs.h"

#include <QFile>
#include <QHash>
#include <QTemporaryDir>
#include <QTest>

#include <cstddef>
#include <cstring>

using namespace emberline::engine;
using emberline::test::PythonInstall;

namespace {

// One field of the table: its C expression in the versions [from, to], and where the table keeps it.
struct Field {
    const char *name;
    int from;
    int to;
    const char *expression;
    uint32_t PythonLayout::*member;
};

// clang-format off
const Field kFields[] = {
    {"runtimeInterpretersHead", 8, 13, "offsetof(_PyRuntimeState, interpreters.head)", &PythonLayout::runtimeInterpretersHead},
    {"runtimeThreadCurrent", 8, 11, "offsetof(_PyRuntimeState, gilstate.tstate_current)", &PythonLayout::runtimeThreadCurrent},
    {"interpNext", 8, 13, "offsetof(PyInterpreterState, next)", &PythonLayout::interpNext},
    {"interpThreadsHead", 8, 10, "offsetof(PyInterpreterState, tstate_head)", &PythonLayout::interpThreadsHead},
    {"interpThreadsHead", 11, 13, "offsetof(PyInterpreterState, threads.head)", &PythonLayout::interpThreadsHead},
    {"threadNext", 8, 13, "offsetof(PyThreadState, next)", &PythonLayout::threadNext},
    {"threadId", 8, 13, "offsetof(PyThreadState, thread_id)", &PythonLayout::threadId},
    {"threadNativeId", 11, 13, "offsetof(PyThreadState, native_thread_id)", &PythonLayout::threadNativeId},
    {"threadFrame", 8, 10, "offsetof(PyThreadState, frame)", &PythonLayout::threadFrame},
    {"threadFrame", 13, 13, "offsetof(PyThreadState, current_frame)", &PythonLayout::threadFrame},
    {"threadStatus", 12, 13, "offsetof(PyThreadState, _status)", &PythonLayout::threadStatus},
    {"threadCframe", 11, 12, "offsetof(PyThreadState, cframe)", &PythonLayout::threadCframe},
    {"cframeCurrentFrame", 11, 12, "offsetof(_PyCFrame, current_frame)", &PythonLayout::cframeCurrentFrame},
    {"framePrevious", 8, 10, "offsetof(PyFrameObject, f_back)", &PythonLayout::framePrevious},
    {"framePrevious", 11, 13, "offsetof(_PyInterpreterFrame, previous)", &PythonLayout::framePrevious},
    {"frameCode", 8, 10, "offsetof(PyFrameObject, f_code)", &PythonLayout::frameCode},
    {"frameCode", 11, 12, "offsetof(_PyInterpreterFrame, f_code)", &PythonLayout::frameCode},
    {"frameCode", 13, 13, "offsetof(_PyInterpreterFrame, f_executable)", &PythonLayout::frameCode},
    {"frameInstruction", 8, 10, "offsetof(PyFrameObject, f_lasti)", &PythonLayout::frameInstruction},
    {"frameInstruction", 11, 12, "offsetof(_PyInterpreterFrame, prev_instr)", &PythonLayout::frameInstruction},
    {"frameInstruction", 13, 13, "offsetof(_PyInterpreterFrame, instr_ptr)", &PythonLayout::frameInstruction},
    {"frameOwner", 11, 13, "offsetof(_PyInterpreterFrame, owner)", &PythonLayout::frameOwner},
    {"frameIsEntry", 11, 11, "offsetof(_PyInterpreterFrame, is_entry)", &PythonLayout::frameIsEntry},
    {"codeFilename", 8, 13, "offsetof(PyCodeObject, co_filename)", &PythonLayout::codeFilename},
    {"codeName", 8, 13, "offsetof(PyCodeObject, co_name)", &PythonLayout::codeName},
    {"codeQualname", 11, 13, "offsetof(PyCodeObject, co_qualname)", &PythonLayout::codeQualname},
    {"codeFirstLineno", 8, 13, "offsetof(PyCodeObject, co_firstlineno)", &PythonLayout::codeFirstLineno},
    {"codeLineTable", 8, 9, "offsetof(PyCodeObject, co_lnotab)", &PythonLayout::codeLineTable},
    {"codeLineTable", 10, 13, "offsetof(PyCodeObject, co_linetable)", &PythonLayout::codeLineTable},
    {"codeCode", 8, 10, "offsetof(PyCodeObject, co_code)", &PythonLayout::codeCode},
    {"codeCodeAdaptive", 11, 13, "offsetof(PyCodeObject, co_code_adaptive)", &PythonLayout::codeCodeAdaptive},
    {"codeFirstTraceable", 11, 13, "offsetof(PyCodeObject, _co_firsttraceable)", &PythonLayout::codeFirstTraceable},
    {"objectType", 8, 13, "offsetof(PyObject, ob_type)", &PythonLayout::objectType},
    {"unicodeLength", 8, 13, "offsetof(PyASCIIObject, length)", &PythonLayout::unicodeLength},
    {"unicodeState", 8, 13, "offsetof(PyASCIIObject, state)", &PythonLayout::unicodeState},
    {"unicodeAsciiData", 8, 13, "sizeof(PyASCIIObject)", &PythonLayout::unicodeAsciiData},
    {"unicodeCompactData", 8, 13, "sizeof(PyCompactUnicodeObject)", &PythonLayout::unicodeCompactData},
    {"unicodeKindShift", 8, 13, "stateBits(1, 0, 0) == 4 ? 2 : 99", &PythonLayout::unicodeKindShift},
    {"unicodeCompactBit", 8, 13, "stateBits(0, 1, 0)", &PythonLayout::unicodeCompactBit},
    {"unicodeAsciiBit", 8, 13, "stateBits(0, 0, 1)", &PythonLayout::unicodeAsciiBit},
    {"bytesSize", 8, 13, "offsetof(PyBytesObject, ob_base.ob_size)", &PythonLayout::bytesSize},
    {"bytesData", 8, 13, "offsetof(PyBytesObject, ob_sval)", &PythonLayout::bytesData},
};

// 3.13's _Py_DebugOffsets, field for field as DebugOffsets313 lays it out.
const std::pair<const char *, size_t> kDebugFields[] = {
    {"offsetof(_PyRuntimeState, debug_offsets)", 0},
    {"sizeof(_Py_DebugOffsets)", sizeof(DebugOffsets313)},
    {"offsetof(_Py_DebugOffsets, version)", offsetof(DebugOffsets313, version)},
    {"offsetof(_Py_DebugOffsets, free_threaded)", offsetof(DebugOffsets313, freeThreaded)},
    {"offsetof(_Py_DebugOffsets, runtime_state.interpreters_head)", offsetof(DebugOffsets313, runtimeState.interpretersHead)},
    {"offsetof(_Py_DebugOffsets, interpreter_state.next)", offsetof(DebugOffsets313, interpreterState.next)},
    {"offsetof(_Py_DebugOffsets, interpreter_state.threads_head)", offsetof(DebugOffsets313, interpreterState.threadsHead)},
    {"offsetof(_Py_DebugOffsets, thread_state.next)", offsetof(DebugOffsets313, threadState.next)},
    {"offsetof(_Py_DebugOffsets, thread_state.current_frame)", offsetof(DebugOffsets313, threadState.currentFrame)},
    {"offsetof(_Py_DebugOffsets, thread_state.thread_id)", offsetof(DebugOffsets313, threadState.threadId)},
    {"offsetof(_Py_DebugOffsets, thread_state.native_thread_id)", offsetof(DebugOffsets313, threadState.nativeThreadId)},
    {"offsetof(_Py_DebugOffsets, thread_state.status)", offsetof(DebugOffsets313, threadState.status)},
    {"offsetof(_Py_DebugOffsets, interpreter_frame.previous)", offsetof(DebugOffsets313, interpreterFrame.previous)},
    {"offsetof(_Py_DebugOffsets, interpreter_frame.executable)", offsetof(DebugOffsets313, interpreterFrame.executable)},
    {"offsetof(_Py_DebugOffsets, interpreter_frame.instr_ptr)", offsetof(DebugOffsets313, interpreterFrame.instrPtr)},
    {"offsetof(_Py_DebugOffsets, interpreter_frame.owner)", offsetof(DebugOffsets313, interpreterFrame.owner)},
    {"offsetof(_Py_DebugOffsets, code_object.filename)", offsetof(DebugOffsets313, codeObject.filename)},
    {"offsetof(_Py_DebugOffsets, code_object.name)", offsetof(DebugOffsets313, codeObject.name)},
    {"offsetof(_Py_DebugOffsets, code_object.qualname)", offsetof(DebugOffsets313, codeObject.qualname)},
    {"offsetof(_Py_DebugOffsets, code_object.linetable)", offsetof(DebugOffsets313, codeObject.linetable)},
    {"offsetof(_Py_DebugOffsets, code_object.firstlineno)", offsetof(DebugOffsets313, codeObject.firstlineno)},
    {"offsetof(_Py_DebugOffsets, code_object.co_code_adaptive)", offsetof(DebugOffsets313, codeObject.coCodeAdaptive)},
    {"offsetof(_Py_DebugOffsets, pyobject.ob_type)", offsetof(DebugOffsets313, pyObject.obType)},
    {"offsetof(_Py_DebugOffsets, bytes_object.ob_size)", offsetof(DebugOffsets313, bytesObject.obSize)},
    {"offsetof(_Py_DebugOffsets, bytes_object.ob_sval)", offsetof(DebugOffsets313, bytesObject.obSval)},
    {"offsetof(_Py_DebugOffsets, unicode_object.state)", offsetof(DebugOffsets313, unicodeObject.state)},
    {"offsetof(_Py_DebugOffsets, unicode_object.length)", offsetof(DebugOffsets313, unicodeObject.length)},
    {"offsetof(_Py_DebugOffsets, unicode_object.asciiobject_size)", offsetof(DebugOffsets313, unicodeObject.asciiobjectSize)},
    {"offsetof(_Py_DebugOffsets, gc.collecting)", offsetof(DebugOffsets313, gc.collecting)},
};
// clang-format on

const char kProbeHead[] = R"(#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX < 0x03090000
#include "frameobject.h"
#include "internal/pycore_pystate.h"
#elif PY_VERSION_HEX < 0x030B0000
#include "frameobject.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#else
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#endif
/* The state word of a string with one bit field set: where the bits lie. */
static unsigned stateBits(unsigned kind, unsigned compact, unsigned ascii)
{
    PyASCIIObject a;
    unsigned word;
    memset(&a, 0, sizeof a);
    a.state.kind = kind;
    a.state.compact = compact;
    a.state.ascii = ascii;
    memcpy(&word, (char *)&a + offsetof(PyASCIIObject, state), sizeof word);
    return word;
}
/* The state word of a thread state with its `active` bit set (3.12+). */
#if PY_VERSION_HEX >= 0x030C0000
static unsigned activeBit(void)
{
    PyThreadState t;
    unsigned word;
    memset(&t, 0, sizeof t);
    t._status.active = 1;
    memcpy(&word, (char *)&t + offsetof(PyThreadState, _status), sizeof word);
    return word;
}
#endif
#define P(name, value) printf("%s %zu\n", name, (size_t)(value))
int main(void)
{
    (void)stateBits;
)";

const PythonLayout &tableOf(int minor)
{
    const PythonLayout *l = builtinLayout(3, minor);
    return l ? *l : kPython313;
}

} // namespace

class TestPythonLayout : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void headers_data()
    {
        QTest::addColumn<QString>("label");
        QTest::addColumn<int>("minor");
        QTest::addColumn<QStringList>("includes");
        const std::vector<PythonInstall> installs = emberline::test::findPythonInstalls();
        bool any = false;
        for (int minor = 8; minor <= 13; ++minor) {
            bool found = false;
            for (const PythonInstall &p : installs) {
                if (p.minor != minor)
                    continue;
                if (!QFile::exists(p.include + QStringLiteral("/Python.h")) ||
                    !QFile::exists(p.include + QStringLiteral("/internal"))) {
                    qInfo("%s: no headers in %s", qPrintable(p.label()), qPrintable(p.include));
                    continue;
                }
                found = any = true;
                QStringList includes{p.include, p.include + QStringLiteral("/internal")};
                if (p.platInclude != p.include)
                    includes << p.platInclude;
                QTest::newRow(qPrintable(p.label())) << p.label() << p.minor << includes;
            }
            if (!found)
                qInfo("no CPython 3.%d with headers is installed: its table is not checked here", minor);
        }
        if (!any)
            QTest::newRow("none") << QString() << 0 << QStringList();
    }

    void headers()
    {
        QFETCH(QString, label);
        QFETCH(int, minor);
        QFETCH(QStringList, includes);
        if (label.isEmpty())
            QSKIP("no CPython 3.8-3.13 with its headers is installed");
        QByteArray source = kProbeHead;
        QHash<QString, uint32_t> expected;
        for (const Field &f : kFields) {
            if (minor < f.from || minor > f.to)
                continue;
            source += QByteArray("    P(\"") + f.name + "\", " + f.expression + ");\n";
            expected.insert(QString::fromLatin1(f.name), tableOf(minor).*f.member);
        }
        if (minor >= 11)
            source += "    P(\"ownerGenerator\", FRAME_OWNED_BY_GENERATOR);\n";
        if (minor >= 12)
            source += "    P(\"ownerCStack\", FRAME_OWNED_BY_CSTACK);\n    P(\"threadActiveBit\", activeBit());\n";
        if (minor == 13)
            for (const auto &[expression, ours] : kDebugFields)
                source += QByteArray("    P(\"") + expression + "\", " + expression + ");\n";
        source += "    return 0;\n}\n";

        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("probe.c")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(source);
        file.close();
        QStringList args{QStringLiteral("-DPy_BUILD_CORE"), file.fileName(), QStringLiteral("-o"),
                         dir.filePath(QStringLiteral("probe"))};
        for (const QString &i : includes)
            args << QStringLiteral("-I") + i;
        QProcess cc;
        cc.start(QStringLiteral("cc"), args);
        if (!cc.waitForStarted()) {
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL("no C compiler (cc): the tables cannot be checked against the headers");
            QSKIP("no C compiler (cc) to compile the probe");
        }
        QVERIFY(cc.waitForFinished(120000));
        QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().constData());
        QProcess probe;
        probe.start(dir.filePath(QStringLiteral("probe")), {});
        QVERIFY(probe.waitForFinished(10000));
        QCOMPARE(probe.exitCode(), 0);

        const PythonLayout &table = tableOf(minor);
        QCOMPARE(int(table.minor), minor);
        int compared = 0;
        for (const QByteArray &line : probe.readAllStandardOutput().trimmed().split('\n')) {
            const int space = line.lastIndexOf(' ');
            const QString name = QString::fromLatin1(line.left(space));
            const uint64_t value = line.mid(space + 1).toULongLong();
            uint64_t ours = 0;
            if (expected.contains(name))
                ours = expected.value(name);
            else if (name == QLatin1String("ownerGenerator"))
                ours = table.ownerGenerator;
            else if (name == QLatin1String("ownerCStack"))
                ours = table.ownerCStack;
            else if (name == QLatin1String("threadActiveBit"))
                ours = table.threadActiveBit;
            else
                for (const auto &[expression, offset] : kDebugFields)
                    if (name == QLatin1String(expression))
                        ours = offset;
            if (ours != value)
                QFAIL(qPrintable(
                    QStringLiteral("%1: the headers say %2, Emberline's table %3").arg(name).arg(value).arg(ours)));
            ++compared;
        }
        QVERIFY(compared >= 20);

        // Fields the version does not have are absent from its table, so the reader never follows them.
        for (const Field &f : kFields) {
            bool has = false;
            for (const Field &g : kFields)
                has = has || (std::strcmp(g.name, f.name) == 0 && minor >= g.from && minor <= g.to);
            if (!has)
                QVERIFY2(table.*f.member == kPyAbsent, f.name);
        }
        QCOMPARE(table.ownerCStack != kPyNoOwner, minor >= 12);
        QCOMPARE(table.ownerGenerator != kPyNoOwner, minor >= 11);
        QCOMPARE(table.threadActiveBit != 0, minor >= 12);
    }

    // The choice of a layout: tables for 3.8-3.12; 3.13 only from debug offsets that hold their cookie and version;
    // patched offsets are used, but what only the table knows is dropped; other versions have none, with a reason.
    void choice()
    {
        QVERIFY(choosePythonLayout(3, 9, nullptr).ok());
        QCOMPARE(int(choosePythonLayout(3, 12, nullptr)->layout.minor), 12);
        const auto none = choosePythonLayout(3, 14, nullptr);
        QVERIFY(!none.ok());
        QVERIFY(none.error().message.find("3.14") != std::string::npos);
        QVERIFY(!choosePythonLayout(3, 7, nullptr).ok());
        QVERIFY(!choosePythonLayout(3, 13, nullptr).ok());

        DebugOffsets313 o{};
        std::memcpy(o.cookie, kPyDebugCookie, sizeof o.cookie);
        o.version = 0x030d00f0;
        o.runtimeState = {2000, 0, 632};
        o.interpreterState.size = 9000;
        o.interpreterState.next = 7264;
        o.interpreterState.threadsHead = 7344;
        o.threadState = {300, 0, 8, 16, 72, 152, 160, 0, 32};
        o.interpreterFrame = {80, 8, 0, 56, 72, 70};
        o.codeObject = {200, 112, 120, 128, 136, 68, 0, 0, 0, 200};
        o.pyObject = {16, 8};
        o.bytesObject = {40, 16, 32};
        o.unicodeObject = {40, 32, 16, 40};
        const auto agreed = choosePythonLayout(3, 13, &o);
        QVERIFY2(agreed.ok(), agreed.ok() ? "" : agreed.error().message.c_str());
        QCOMPARE(agreed->layout.codeFirstTraceable, kPython313.codeFirstTraceable);
        QCOMPARE(agreed->layout.unicodeCompactData, kPython313.unicodeCompactData);

        o.threadState.nativeThreadId = 168; // a patched build
        const auto patched = choosePythonLayout(3, 13, &o);
        QVERIFY(patched.ok());
        QCOMPARE(patched->layout.threadNativeId, 168u);
        QCOMPARE(patched->layout.codeFirstTraceable, kPyAbsent);
        QVERIFY(patched->source.find("native_thread_id") != std::string::npos);

        o.threadState.nativeThreadId = 400; // outside its structure: not debug offsets
        QVERIFY(!choosePythonLayout(3, 13, &o).ok());
        o.threadState.nativeThreadId = 160;
        o.version = 0x030e0000;
        QVERIFY(!choosePythonLayout(3, 13, &o).ok());
        o.version = 0x030d00f0;
        o.cookie[0] = 'y';
        QVERIFY(!choosePythonLayout(3, 13, &o).ok());
    }
};

QTEST_GUILESS_MAIN(TestPythonLayout)
#include "tst_python_layout.moc"
