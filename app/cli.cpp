#include "app/cli.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/session_folder.h"
#include "engine/report/report.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>
#include <filesystem>

namespace emberline::app {
namespace {

// A file, or a session folder merged from its flushes when its profile.pprof is missing or broken; what was
// left out is said on stderr, since the numbers then cover less than the whole session.
engine::Result<engine::Profile> readProfileOrFolder(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec))
        return engine::readPprofFile(path);
    auto folder = engine::readSessionFolder(path);
    if (!folder)
        return folder.error();
    if (folder->fromFlushes)
        std::fprintf(stderr, "emberline report: merged %zu flush file(s), since %s\n", folder->flushesMerged,
                     folder->sessionProfileProblem.c_str());
    for (const std::string &skipped : folder->skipped)
        std::fprintf(stderr, "emberline report: skipped %s\n", skipped.c_str());
    return std::move(folder->profile);
}

} // namespace

Verb reportVerb()
{
    return {QStringLiteral("report"), QStringLiteral("report [options] FILE [--base BASE]"), configureReportParser,
            runReport};
}

void configureReportParser(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Print the top functions of a pprof profile by self value, with self and total per\n"
        "function and the totals of every sample type, like `go tool pprof -top`.\n"
        "With --base, each function's self and total are FILE minus BASE, ordered by the\n"
        "size of the change, like `go tool pprof -diff_base=BASE -top FILE`.\n"
        "Needs no display."));
    parser.addHelpOption();
    parser.addOptions({
        {QStringLiteral("sample-type"), QStringLiteral("Sample type to report (default: the profile's default)."),
         QStringLiteral("NAME")},
        {QStringLiteral("top"), QStringLiteral("Print only the first N functions."), QStringLiteral("N")},
        {QStringLiteral("json"), QStringLiteral("Print JSON instead of a table: sample_types (type, unit, total), "
                                                "samples, and functions (name, self, total; with --base also "
                                                "base_self and base_total).")},
        {QStringLiteral("base"), QStringLiteral("Compare with BASE (a .pprof file or a session folder): self and "
                                                "total become FILE minus BASE."),
         QStringLiteral("BASE")},
        {QStringLiteral("normalize"), QStringLiteral("With --base, scale BASE so that its total equals FILE's.")},
    });
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("A .pprof file (gzip-compressed or raw), or a session folder."));
}

int runReport(const QStringList &args)
{
    QCommandLineParser parser;
    configureReportParser(parser);
    if (!parser.parse(args)) {
        std::fprintf(stderr, "emberline report: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("help-all"))) {
        std::fputs(qPrintable(helpText(parser, {reportVerb().usage})), stdout);
        return 0;
    }
    const QString sampleType = QStringLiteral("sample-type");
    const QString top = QStringLiteral("top");
    const QString json = QStringLiteral("json");
    const QStringList files = parser.positionalArguments();
    if (files.size() != 1) {
        std::fprintf(stderr, "emberline report: expected exactly one FILE (see emberline report --help)\n");
        return 2;
    }
    engine::ReportOptions options;
    options.sampleType = parser.value(sampleType).toStdString();
    options.json = parser.isSet(json);
    options.fileName = files.first().toStdString();
    if (parser.isSet(top)) {
        bool ok = false;
        options.top = parser.value(top).toInt(&ok);
        if (!ok || options.top < 0) {
            std::fprintf(stderr, "emberline report: --top needs a whole number, got '%s'\n",
                         qPrintable(parser.value(top)));
            return 2;
        }
    }
    auto profile = readProfileOrFolder(files.first().toStdString());
    if (!profile) {
        std::fprintf(stderr, "emberline report: %s\n", profile.error().message.c_str());
        return 1;
    }
    const QString baseOption = QStringLiteral("base");
    if (parser.isSet(QStringLiteral("normalize")) && !parser.isSet(baseOption)) {
        std::fprintf(stderr, "emberline report: --normalize needs --base\n");
        return 2;
    }
    engine::Result<std::string> report = std::string();
    if (parser.isSet(baseOption)) {
        auto base = readProfileOrFolder(parser.value(baseOption).toStdString());
        if (!base) {
            std::fprintf(stderr, "emberline report: base: %s\n", base.error().message.c_str());
            return 1;
        }
        options.baseFileName = parser.value(baseOption).toStdString();
        options.normalize = parser.isSet(QStringLiteral("normalize"));
        report = engine::buildDiffReport(profile.value(), base.value(), options);
    } else {
        report = engine::buildReport(profile.value(), options);
    }
    if (!report) {
        std::fprintf(stderr, "emberline report: %s\n", report.error().message.c_str());
        return 1;
    }
    std::fputs(report.value().c_str(), stdout);
    return 0;
}

} // namespace emberline::app
