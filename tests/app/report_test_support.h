#pragma once

// Running `emberline` and `go tool pprof -top` as a user would, for the tests of the report verb: pprof's table
// read back in raw units (nanoseconds, bytes, counts).

#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

#include <limits>
#include <map>

namespace emberline::test {

inline const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");
inline const QString kData = QStringLiteral(EMBERLINE_TEST_DATA "/pprof");

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

inline Run run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

struct Values {
    qint64 self = 0;
    qint64 total = 0;
    bool operator==(const Values &) const = default;
};

// One sample type as go tool pprof -top reports it.
struct PprofTop {
    bool ok = false;
    QString error;
    qint64 total = -1;
    std::map<QString, Values> functions;
};

// "1040000000ns", "-479064B", "0" → the integer; kNotRaw when the cell is not an integer in raw units.
inline constexpr qint64 kNotRaw = std::numeric_limits<qint64>::min();

inline qint64 rawValue(const QString &cell)
{
    static const QRegularExpression re(QStringLiteral("^(-?\\d+)(ns|B)?$"));
    const auto m = re.match(cell);
    return m.hasMatch() ? m.captured(1).toLongLong() : kNotRaw;
}

// Runs `go tool pprof -top` so that it prints every function in raw units: -nodecount and the fractions keep every
// node; -unit=ns (time) or -unit=B (bytes; counts are printed as is, with a "B" suffix) avoid rounding;
// -symbolize=none keeps names as stored (otherwise pprof "demangles" names that look like C++, e.g. it strips
// the parentheses of Node's `RegExp: ([a-z]+)@...` frames).
// `extra` goes before the file (e.g. -diff_base=BASE).
inline PprofTop goTop(const QString &go, const QString &file, int sampleIndex, const QString &unit,
                      const QStringList &extra = {})
{
    PprofTop top;
    QStringList args = {QStringLiteral("tool"),
                        QStringLiteral("pprof"),
                        QStringLiteral("-top"),
                        QStringLiteral("-symbolize=none"),
                        QStringLiteral("-nodecount=1000000"),
                        QStringLiteral("-nodefraction=0"),
                        QStringLiteral("-edgefraction=0"),
                        QStringLiteral("-sample_index=%1").arg(sampleIndex),
                        unit == QLatin1String("nanoseconds") ? QStringLiteral("-unit=ns") : QStringLiteral("-unit=B")};
    args += extra;
    args << file;
    const Run r = run(go, args);
    if (r.exitCode != 0) {
        top.error = QString::fromUtf8(r.err);
        return top;
    }
    bool inTable = false;
    static const QRegularExpression totalRe(QStringLiteral("accounting for \\S+, [\\d.]+% of (\\S+) total"));
    for (const QByteArray &rawLine : r.out.split('\n')) {
        const QString line = QString::fromUtf8(rawLine);
        if (const auto m = totalRe.match(line); m.hasMatch())
            top.total = rawValue(m.captured(1));
        if (line.trimmed().startsWith(QLatin1String("flat  flat%"))) {
            inTable = true;
            continue;
        }
        if (!inTable || line.trimmed().isEmpty())
            continue;
        // flat flat% sum% cum cum% name — the name may contain spaces.
        static const QRegularExpression rowRe(
            QStringLiteral("^\\s*(\\S+)\\s+\\S+%\\s+\\S+%\\s+(\\S+)\\s+\\S+%\\s+(.*)$"));
        const auto m = rowRe.match(line);
        if (!m.hasMatch()) {
            top.error = QStringLiteral("unparsed pprof line: ") + line;
            return top;
        }
        // pprof marks a function reached only through inlining "(inline)", and one reached both ways
        // "(partial-inline)": an annotation on the row, not part of the name.
        QString name = m.captured(3);
        static const QRegularExpression inlineRe(QStringLiteral(" \\((partial-)?inline\\)$"));
        name.remove(inlineRe);
        const Values v{rawValue(m.captured(1)), rawValue(m.captured(2))};
        if (v.self == kNotRaw || v.total == kNotRaw) {
            top.error = QStringLiteral("value not in raw units: ") + line;
            return top;
        }
        if (top.functions.count(name)) {
            top.error = QStringLiteral("pprof listed a name twice: ") + name;
            return top;
        }
        top.functions[name] = v;
    }
    top.ok = top.total != kNotRaw && top.total >= 0;
    if (!top.ok && top.error.isEmpty())
        top.error = QStringLiteral("no total in pprof's output");
    return top;
}

// The first function pprof lists that `mine` misses or gives other values; empty when all agree.
inline QString firstDisagreement(const std::map<QString, Values> &mine, const PprofTop &theirs)
{
    for (const auto &[name, v] : theirs.functions) {
        const auto it = mine.find(name);
        if (it == mine.end())
            return QStringLiteral("missing function: ") + name;
        if (!(it->second == v))
            return QStringLiteral("%1: ours self %2 total %3, pprof self %4 total %5")
                .arg(name)
                .arg(it->second.self)
                .arg(it->second.total)
                .arg(v.self)
                .arg(v.total);
    }
    return {};
}

inline QString goBinary()
{
    return QStandardPaths::findExecutable(QStringLiteral("go"));
}

} // namespace emberline::test
