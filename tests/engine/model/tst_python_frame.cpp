// Which frames are Python functions' (no mapping, a Python source file), the module and import path their files
// give, and how the frame table keeps a Python function apart from native code of the same name: a script's `main`
// above the interpreter's C `main`, in one table and in the union a comparison makes.

#include "tests/engine/test_support.h"

#include "engine/analysis/call_tree.h"
#include "engine/model/frame_table.h"
#include "engine/model/python_frame.h"

#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

// `python3 /src/app/split.py` as Emberline records it: the interpreter's native frames (a mapping of the python3.12
// binary) at the root, then Python frames (no mapping) of the script and of json. Both run a function named `main`.
Profile scriptWithTwoMains()
{
    test::ProfileBuilder b({{"cpu-time", "nanoseconds"}});
    const uint32_t binary = b.mapping("/usr/bin/python3.12", 0x400000, 0x800000);
    const uint32_t nativeMain = b.location({b.function("main", "")}, binary, 0x401000);
    const uint32_t evalCode = b.location({b.function("PyEval_EvalCode", "")}, binary, 0x402000);
    const uint32_t module = b.location({b.function("<module>", "/src/app/split.py", 90)});
    const uint32_t pyMainFunction = b.function("main", "/src/app/split.py", 80);
    const uint32_t pyMain = b.location({pyMainFunction});
    const uint32_t encode = b.location({b.function("JSONEncoder.encode", "/usr/lib/python3.12/json/encoder.py", 258)});
    // The exporter's Python locations are (function, line): the same function on another, lower line.
    Location lower = b.profile().locations()[pyMain];
    lower.id = b.profile().locations().size() + 1;
    lower.lines.front().line = 4;
    b.profile().locations().push_back(lower);
    const auto pyMainLower = static_cast<uint32_t>(b.profile().locations().size() - 1);
    b.sample({encode, pyMain, module, evalCode, nativeMain}, {30});
    b.sample({pyMainLower, module, evalCode, nativeMain}, {10});
    b.sample({nativeMain}, {5});
    return b.take();
}

} // namespace

class TestPythonFrame : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a view would take native code for Python (or the reverse) and colour, describe and disassemble
    // it wrongly.
    void pythonFramesAreRecognized()
    {
        QVERIFY(isPythonSourceFile("/usr/lib/python3.12/json/encoder.py"));
        QVERIFY(isPythonSourceFile("C:/tools/gui.pyw"));
        QVERIFY(isPythonSourceFile("<frozen importlib._bootstrap>"));
        QVERIFY(!isPythonSourceFile("/src/py.c"));
        QVERIFY(!isPythonSourceFile("/src/app.pyc"));
        QVERIFY(!isPythonSourceFile("<frozen"));
        QVERIFY(isPythonFrame(Frame{"Worker.hot", "/src/app/split.py", 18, "", true}));
        // Native code built from a file named .py (Cython keeps it) lies in a mapping: not a Python frame.
        QVERIFY(!isPythonFrame(Frame{"__pyx_pw_fast", "/src/fast.py", 3, "fast.cpython-312.so", true}));
        QVERIFY(!isPythonFrame(Frame{"main", "", 0, "python3.12", true}));
    }

    // If this fails, frames of one module get different colours, or the tooltip's short path is not what `import`
    // sees.
    void modulesAndImportPaths()
    {
        QCOMPARE(pythonModuleName("/root/.pyenv/versions/3.12.1/lib/python3.12/json/encoder.py"),
                 std::string("json.encoder"));
        QCOMPARE(pythonImportPath("/root/.pyenv/versions/3.12.1/lib/python3.12/json/encoder.py"),
                 std::string("json/encoder.py"));
        QCOMPARE(pythonModuleName("/usr/lib/python3.12/json/__init__.py"), std::string("json"));
        QCOMPARE(pythonModuleName("/usr/lib64/python3.13t/threading.py"), std::string("threading"));
        QCOMPARE(pythonModuleName("/venv/lib/python3.12/site-packages/requests/api.py"), std::string("requests.api"));
        QCOMPARE(pythonImportPath("/venv/lib/python3.12/site-packages/requests/api.py"),
                 std::string("requests/api.py"));
        QCOMPARE(pythonModuleName("/usr/lib/python3/dist-packages/apt/cache.py"), std::string("apt.cache"));
        QCOMPARE(pythonModuleName("<frozen importlib._bootstrap>"), std::string("importlib._bootstrap"));
        QCOMPARE(pythonImportPath("<frozen importlib._bootstrap>"), std::string("<frozen importlib._bootstrap>"));
        QCOMPARE(pythonModuleName("/home/me/tools/split.py"), std::string("split"));
        QCOMPARE(pythonImportPath("/home/me/tools/split.py"), std::string("split.py"));
        QCOMPARE(pythonModuleName("/home/me/proj/app/__init__.py"), std::string("app"));
        QCOMPARE(pythonImportPath("/home/me/proj/app/__init__.py"), std::string("app/__init__.py"));
        QCOMPARE(pythonModuleName("split.py"), std::string("split"));
        // A folder merely named like Python's is no import root without lib/ above it.
        QCOMPARE(pythonModuleName("/src/python3.12/tool.py"), std::string("tool"));
    }

    // If this fails, the script's `main` and the interpreter's are one frame, which the views then colour and
    // describe as one of the two; or a Python function's line is not the lowest one known of it.
    void pythonMainIsNotNativeMain()
    {
        const Profile p = scriptWithTwoMains();
        const FrameTable frames(p);
        const std::vector<uint32_t> mains = frames.findByName("main");
        QCOMPARE(mains.size(), size_t(2));
        const Frame &first = frames.frame(mains[0]);
        const Frame &second = frames.frame(mains[1]);
        QVERIFY(isPythonFrame(first) != isPythonFrame(second));
        const Frame &python = isPythonFrame(first) ? first : second;
        QCOMPARE(python.file, std::string("/src/app/split.py"));
        QCOMPARE(python.line, int64_t(4)); // below the recorded start line (80) a sample was seen on line 4
        QCOMPARE(frames.frame(frames.findByName("JSONEncoder.encode").front()).line, int64_t(10));

        // The call tree keeps both, each on its own path.
        const std::vector<int64_t> perStack = {30, 10, 5};
        auto tree = CallTree::build(p, frames, perStack);
        QVERIFY(tree);
        QCOMPARE(tree->dump(frames), std::string("<root> 0 45\n"
                                                 "  main 5 45\n"
                                                 "    PyEval_EvalCode 0 40\n"
                                                 "      <module> 0 40\n"
                                                 "        main 10 40\n"
                                                 "          JSONEncoder.encode 30 30\n"));
        // Siblings of one name are ordered the same way in every table: native code first.
        const Frame &native = isPythonFrame(first) ? second : first;
        QVERIFY(frameOrderLess(native, python));
        QVERIFY(!frameOrderLess(python, native));
        QVERIFY(!frameOrderLess(python, python));
        QVERIFY(frames.nameRank()[mains[0]] != frames.nameRank()[mains[1]]);
    }

    // If this fails, a comparison of two Python recordings matches the script's `main` with the interpreter's.
    void unionKeepsThemApart()
    {
        const Profile p = scriptWithTwoMains();
        const FrameTable a(p);
        const FrameTable b(p);
        std::vector<uint32_t> bToUnion;
        const FrameTable both = FrameTable::unionOf(a, b, bToUnion);
        QCOMPARE(both.size(), a.size());
        for (uint32_t f = 0; f < b.size(); ++f) {
            QCOMPARE(both.frame(bToUnion[f]).name, b.frame(f).name);
            QCOMPARE(isPythonFrame(both.frame(bToUnion[f])), isPythonFrame(b.frame(f)));
        }
    }
};

QTEST_GUILESS_MAIN(TestPythonFrame)
#include "tst_python_frame.moc"
