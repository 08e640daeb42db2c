#pragma once

// `go tool pprof -list` read back in raw units, for tests/app/tst_report_list.cpp: per routine (function and
// file), its flat and cum, and each line's.

#include "report_test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <map>

namespace emberline::test {

struct PprofRoutine {
    QString name;
    QString file;
    Values header; // flat, cum as pprof's ROUTINE header prints them
    std::map<qint64, Values> lines;
};

struct PprofList {
    bool ok = false;
    QString error;
    std::vector<PprofRoutine> routines;
};

// A stand-in source file of `lines` lines ("// line N"), so that pprof prints every line of a routine: pprof
// prints per-line values only for a source file it finds.
inline bool writeStandInSource(const QString &path, int lines)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    for (int i = 1; i <= lines; ++i)
        f.write(QStringLiteral("// line %1\n").arg(i).toUtf8());
    return true;
}

inline qint64 cellValue(const QString &cell)
{
    return cell == QLatin1String(".") ? 0 : rawValue(cell);
}

// Runs `go tool pprof -list REGEX` with sources searched under `sourceDir` once `trimPath` is cut from the
// recorded paths.
inline PprofList goList(const QString &go, const QString &file, const QString &regex, int sampleIndex,
                        const QString &unit, const QString &sourceDir, const QString &trimPath)
{
    PprofList list;
    const Run r =
        run(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-list=") + regex,
                 QStringLiteral("-symbolize=none"), QStringLiteral("-sample_index=%1").arg(sampleIndex),
                 unit == QLatin1String("nanoseconds") ? QStringLiteral("-unit=ns") : QStringLiteral("-unit=B"),
                 QStringLiteral("-source_path=") + sourceDir, QStringLiteral("-trim_path=") + trimPath, file});
    if (r.exitCode != 0) {
        list.error = QString::fromUtf8(r.err);
        return list;
    }
    static const QRegularExpression routineRe(QStringLiteral("^ROUTINE =+ (.*) in (.*)$"));
    static const QRegularExpression headerRe(QStringLiteral("^\\s*(\\S+)\\s+(\\S+) \\(flat, cum\\)"));
    static const QRegularExpression rowRe(QStringLiteral("^\\s*(\\S+)\\s+(\\S+)\\s+(\\d+):"));
    for (const QByteArray &raw : r.out.split('\n')) {
        const QString line = QString::fromUtf8(raw);
        if (const auto m = routineRe.match(line); m.hasMatch()) {
            list.routines.push_back({m.captured(1), m.captured(2), {}, {}});
            continue;
        }
        if (list.routines.empty())
            continue;
        PprofRoutine &routine = list.routines.back();
        if (const auto m = headerRe.match(line); m.hasMatch()) {
            routine.header = {cellValue(m.captured(1)), cellValue(m.captured(2))};
            continue;
        }
        if (const auto m = rowRe.match(line); m.hasMatch()) {
            const Values v{cellValue(m.captured(1)), cellValue(m.captured(2))};
            if (v.self == kNotRaw || v.total == kNotRaw) {
                list.error = QStringLiteral("value not in raw units: ") + line;
                return list;
            }
            if (v.self != 0 || v.total != 0)
                routine.lines[m.captured(3).toLongLong()] = v;
        }
    }
    list.ok = !list.routines.empty();
    if (!list.ok)
        list.error = QStringLiteral("pprof listed no routine: ") + QString::fromUtf8(r.err);
    return list;
}

} // namespace emberline::test
