#pragma once

// Shared by the injection tests: the target program and the probe library (tests/targets/inject_*), a target started
// and read line by line, /proc facts of a process, and the guard for tests that need to trace processes.

#include "tests/engine/session/perf_guard.h" // inCi()

#include "engine/inject/inject_client.h"
#include "engine/inject/injector.h"
#include "engine/process/proc_files.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <string>

namespace emberline::test {

using namespace emberline::engine;

inline QString injectTarget(const char *name = "inject_target")
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

inline std::string probeLibrary(const char *name = "libinject_probe.so")
{
    return (QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/inject/") + QLatin1String(name)).toStdString();
}

inline std::string canonical(const std::string &path)
{
    char real[PATH_MAX];
    return ::realpath(path.c_str(), real) ? std::string(real) : path;
}

inline std::string injectHelper()
{
    return EMBERLINE_BINARY_DIR "/lib/emberline/emberline-inject";
}

// inject_probe_hash of the probe: what inject_probe_entry returns for `arg`.
inline int probeHash(const std::string &arg)
{
    unsigned h = 7;
    for (const unsigned char c : arg)
        h = h * 31u + c;
    return static_cast<int>(h % 1000000u);
}

inline InjectRequest probeRequest(qint64 pid, const std::string &argument)
{
    InjectRequest r;
    r.pid = static_cast<int>(pid);
    r.library = probeLibrary();
    r.function = "inject_probe_entry";
    r.argument = argument;
    return r;
}

// Attaching with ptrace to a process that is not our descendant (the helper attaches to its siblings) needs root or
// Yama's ptrace_scope 0.
inline bool ptraceOfOthersAllowed()
{
    return ::geteuid() == 0 || yamaPtraceScope() == 0;
}

// A field of /proc/PID/status (or /proc/PID/task/TID/status), "" when the process is gone.
inline QByteArray statusField(qint64 pid, const char *key, qint64 tid = 0)
{
    const QString path =
        tid ? QStringLiteral("/proc/%1/task/%2/status").arg(pid).arg(tid) : QStringLiteral("/proc/%1/status").arg(pid);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(QByteArray(key) + ':'))
            return line.mid(static_cast<int>(std::strlen(key)) + 1).trimmed();
    return {};
}

// The state letter of every thread of a process (/proc/PID/task/*/stat), counted.
inline std::map<char, int> threadStates(qint64 pid)
{
    std::map<char, int> states;
    const QDir tasks(QStringLiteral("/proc/%1/task").arg(pid));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile f(tasks.filePath(tid) + QStringLiteral("/stat"));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray stat = f.readAll();
        const int close = stat.lastIndexOf(')');
        if (close > 0 && close + 2 < stat.size())
            ++states[stat[close + 2]];
    }
    return states;
}

// A running inject_target (or any target) whose stdout is read as "word value" lines.
class Target {
public:
    explicit Target(const QString &program, const QStringList &args)
    {
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.start(program, args);
    }
    ~Target()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    Target(const Target &) = delete;
    Target &operator=(const Target &) = delete;

    bool started() { return m_process.waitForStarted(5000); }
    qint64 pid() const { return m_process.processId(); }
    QProcess &process() { return m_process; }

    // The value announced as "word value" (waits up to 5 s for it); 0 when it never came.
    qint64 announced(const QByteArray &word)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 5000) {
            for (int at = m_output.indexOf(word + ' '); at >= 0; at = m_output.indexOf(word + ' ', at + 1)) {
                const int end = m_output.indexOf('\n', at);
                if ((at == 0 || m_output[at - 1] == '\n') && end > at)
                    return m_output.mid(at + word.size() + 1, end - at - word.size() - 1).toLongLong();
            }
            m_process.waitForReadyRead(50);
            m_output += m_process.readAllStandardOutput();
        }
        return 0;
    }
    // Waits for the exit; its status (or -1), with everything the program printed in `output`.
    int finish(QByteArray &output, int timeoutMs = 30000)
    {
        const bool finished = m_process.waitForFinished(timeoutMs);
        m_output += m_process.readAllStandardOutput();
        output = m_output + m_process.readAllStandardError();
        if (!finished || m_process.exitStatus() != QProcess::NormalExit)
            return -1;
        return m_process.exitCode();
    }

private:
    QProcess m_process;
    QByteArray m_output;
};

} // namespace emberline::test

#define REQUIRE_PTRACE()                                                                                               \
    do {                                                                                                               \
        if (!emberline::test::ptraceOfOthersAllowed()) {                                                               \
            if (emberline::test::inCi())                                                                               \
                QFAIL("tracing other processes is not permitted here, but CI=true: injection cannot be tested");       \
            QSKIP("tracing processes that are not our descendants needs root or kernel.yama.ptrace_scope=0");          \
        }                                                                                                              \
    } while (0)

#define VERIFY_OK(result) QVERIFY2((result).ok(), (result).ok() ? "" : (result).error().message.c_str())
