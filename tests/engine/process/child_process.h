#pragma once

// A test's wait for the first child a process it started has forked (a shell running its command): read from
// /proc/PID/task/PID/children, independently of the engine's readers.

#include <QFile>
#include <QString>
#include <QTest>

namespace emberline::test {

// The child's pid as text, empty when none appeared within `waitMs`.
inline QString firstChildOf(qint64 pid, int waitMs = 2000)
{
    for (int waited = 0;; waited += 20) {
        QFile children(QStringLiteral("/proc/%1/task/%1/children").arg(pid));
        if (children.open(QIODevice::ReadOnly)) {
            const QString list = QString::fromLatin1(children.readAll()).trimmed();
            if (!list.isEmpty())
                return list.section(QLatin1Char(' '), 0, 0);
        }
        if (waited >= waitMs)
            return {};
        QTest::qWait(20);
    }
}

} // namespace emberline::test
