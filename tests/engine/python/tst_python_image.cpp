// Finding CPython in a process and reading its version from the binary: every installed CPython 3.8-3.13 is started
// and found among its own mappings; the version the binary gives must be the one the interpreter reports, never
// guessed from the file name, and _PyRuntime, PyCode_Type and the eval loop's code must be found and lie in the file's
// mappings. A file that is not a CPython is refused. Were this wrong, the stack reader would pick a wrong layout or
// none, and the agent's walk would check code objects against a wrong type.

#include "engine/python/python_image.h"
#include "tests/engine/python/python_installs.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>

using namespace emberline::engine;
using emberline::test::PythonInstall;

namespace {

// The mapping of /proc/PID/maps that holds `address`: its permissions and file ("" when anonymous); false if none.
bool mappingOf(int pid, uint64_t address, std::string &perms, std::string &file)
{
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range, offset, dev, inode;
        file.clear();
        in >> range >> perms >> offset >> dev >> inode >> file;
        const size_t dash = range.find('-');
        const uint64_t start = std::stoull(range.substr(0, dash), nullptr, 16);
        const uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
        if (address >= start && address < end)
            return true;
    }
    return false;
}

} // namespace

class TestPythonImage : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void installed_data()
    {
        QTest::addColumn<QString>("interpreter");
        QTest::addColumn<QString>("version");
        const std::vector<PythonInstall> installs = emberline::test::findPythonInstalls();
        for (int minor = 8; minor <= 13; ++minor) {
            bool found = false;
            for (const PythonInstall &p : installs)
                if (p.minor == minor) {
                    found = true;
                    QTest::newRow(qPrintable(p.label())) << p.interpreter << p.version;
                }
            if (!found)
                qInfo("no CPython 3.%d is installed: it is not looked for here", minor);
        }
        if (installs.empty())
            QTest::newRow("none") << QString() << QString();
    }

    void installed()
    {
        QFETCH(QString, interpreter);
        QFETCH(QString, version);
        if (interpreter.isEmpty())
            QSKIP("no CPython 3.8-3.13 is installed (pyenv or /usr/bin)");
        QProcess python;
        python.start(interpreter, {QStringLiteral("-c"), QStringLiteral("import sys; sys.stdin.read()")});
        QVERIFY(python.waitForStarted());
        const auto stop = qScopeGuard([&] {
            python.closeWriteChannel();
            if (!python.waitForFinished(5000))
                python.kill();
            python.waitForFinished(5000);
        });
        const int pid = static_cast<int>(python.processId());
        // The interpreter maps libpython (if it uses one) before it reads stdin; wait until the runtime is there.
        Result<PythonImage> image = findPythonInProcess(pid);
        for (int i = 0; i < 50 && (!image.ok() || !image->runtimeAddress); ++i) {
            QTest::qWait(20);
            image = findPythonInProcess(pid);
        }
        QVERIFY2(image.ok(), image.ok() ? "" : image.error().message.c_str());
        qInfo("%s: %s from %s; _PyRuntime from %s; eval loop in %zu part(s)%s", image->path.c_str(),
              image->version.text.c_str(), image->versionFrom.c_str(), image->runtimeFrom.c_str(),
              image->evalLoop.size(),
              image->evalLoopComplete ? "" : " (dynamic symbols only: a split part is unknown)");
        QCOMPARE(QString::fromStdString(image->version.text), version);
        QVERIFY(image->versionSource != PythonVersionSource::FileName);
        if (image->version.minor >= 11)
            QVERIFY(image->versionSource == PythonVersionSource::PyVersion);

        // _PyRuntime: writable data of the file, or its zero-filled part after it (.bss: 3.8, 3.9).
        std::string perms, file;
        QVERIFY(image->runtimeAddress != 0);
        QVERIFY2(mappingOf(pid, image->runtimeAddress, perms, file) && perms.starts_with("rw") &&
                     (file == image->path || file.empty()),
                 "_PyRuntime is not in the file's data");
        // PyCode_Type: a type object the interpreter defines, so in the file's writable data too.
        QVERIFY(image->codeTypeAddress != 0);
        QVERIFY2(mappingOf(pid, image->codeTypeAddress, perms, file) && perms.starts_with("rw") && file == image->path,
                 "PyCode_Type is not in the file's data");
        QVERIFY(image->evalLoopKnown());
        bool main = false;
        for (const PythonCodeRange &r : image->evalLoop) {
            QVERIFY(r.name.starts_with("_PyEval_EvalFrameDefault"));
            main = main || r.name == "_PyEval_EvalFrameDefault";
            for (const uint64_t address : {r.start, r.start + r.size - 1})
                QVERIFY2(mappingOf(pid, address, perms, file) && perms.find('x') != std::string::npos &&
                             file == image->path,
                         r.name.c_str());
        }
        QVERIFY(main);
    }

    // Files that are not a CPython: this test's own executable (ELF, no Python in it) and a text file.
    void notPython()
    {
        const auto self = inspectPythonImage(QCoreApplication::applicationFilePath().toStdString());
        QVERIFY(!self.ok());
        QVERIFY(self.error().message.find("not a CPython") != std::string::npos);
        QTemporaryDir dir;
        QFile text(dir.filePath(QStringLiteral("libpython3.9.so")));
        QVERIFY(text.open(QIODevice::WriteOnly));
        text.write("3.9.18\n");
        text.close();
        QVERIFY(!inspectPythonImage(text.fileName().toStdString()).ok());
    }
};

QTEST_GUILESS_MAIN(TestPythonImage)
#include "tst_python_image.moc"
