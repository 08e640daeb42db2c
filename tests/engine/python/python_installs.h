#pragma once

// The CPython interpreters installed on this machine, found where they live (never a fixed path): every
// `versions/*/bin/python3.N` under pyenv's root ($PYENV_ROOT, else `pyenv root`, else ~/.pyenv) and every
// /usr/bin/python3.N, real files only (pyenv's `python3` on PATH is a shell shim). Each is asked its own version and
// header directories, so the tests need nothing but the interpreters.

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace emberline::test {

struct PythonInstall {
    QString interpreter; // the real file
    int major = 0;
    int minor = 0;
    QString version;     // "3.9.18"
    QString include;     // sysconfig's include directory (Python.h)
    QString platInclude; // and its platform one (pyconfig.h), often the same
    QString label() const { return version + QLatin1Char(' ') + interpreter; }
};

inline QString pyenvRoot()
{
    QString env = qEnvironmentVariable("PYENV_ROOT");
    if (!env.isEmpty())
        return env;
    QProcess p;
    p.start(QStringLiteral("pyenv"), {QStringLiteral("root")});
    if (p.waitForFinished(5000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0) {
        QString root = QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed();
        if (!root.isEmpty())
            return root;
    }
    return QDir::homePath() + QStringLiteral("/.pyenv");
}

inline bool describeInstall(const QString &interpreter, PythonInstall &out)
{
    QProcess p;
    p.start(interpreter,
            {QStringLiteral("-c"), QStringLiteral("import sys, sysconfig, platform; p = sysconfig.get_paths(); "
                                                  "print(sys.version_info[0], sys.version_info[1], "
                                                  "platform.python_version(), p['include'], p['platinclude'])")});
    if (!p.waitForFinished(20000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return false;
    const QStringList parts = QString::fromLocal8Bit(p.readAllStandardOutput()).trimmed().split(QLatin1Char(' '));
    if (parts.size() != 5)
        return false;
    out.interpreter = interpreter;
    out.major = parts[0].toInt();
    out.minor = parts[1].toInt();
    out.version = parts[2];
    out.include = parts[3];
    out.platInclude = parts[4];
    return true;
}

// CPython 3.8 to 3.13, sorted by version; each real file once.
inline std::vector<PythonInstall> findPythonInstalls()
{
    static const QRegularExpression name(QStringLiteral("^python3\\.\\d+$"));
    QStringList candidates;
    const QDir versions(pyenvRoot() + QStringLiteral("/versions"));
    for (const QString &v : versions.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QDir bin(versions.filePath(v) + QStringLiteral("/bin"));
        for (const QString &f : bin.entryList(QDir::Files))
            if (name.match(f).hasMatch())
                candidates << bin.filePath(f);
    }
    const QDir usrBin(QStringLiteral("/usr/bin"));
    for (const QString &f : usrBin.entryList({QStringLiteral("python3.*")}, QDir::Files))
        if (name.match(f).hasMatch())
            candidates << usrBin.filePath(f);
    std::vector<PythonInstall> out;
    QStringList seen;
    for (const QString &c : candidates) {
        const QFileInfo info(c);
        const QString real = info.canonicalFilePath();
        if (real.isEmpty() || seen.contains(real) || !info.isExecutable())
            continue;
        seen << real;
        PythonInstall install;
        if (describeInstall(real, install) && install.major == 3 && install.minor >= 8 && install.minor <= 13)
            out.push_back(install);
    }
    std::sort(out.begin(), out.end(), [](const PythonInstall &a, const PythonInstall &b) {
        return a.minor != b.minor ? a.minor < b.minor : a.interpreter < b.interpreter;
    });
    return out;
}

} // namespace emberline::test
