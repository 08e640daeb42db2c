#include "app/cli.h"

#include "app/report_command.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

namespace emberline::app {
namespace {

// Parsed and checked, or the exit code of a usage error already printed.
struct ParsedRequest {
    ReportRequest request;
    int usageError = 0;
};

int usageError(const char *message, const QString &value = {})
{
    std::fprintf(stderr, "emberline report: %s%s\n", message, qPrintable(value));
    return 2;
}

void addTransforms(const QCommandLineParser &parser, ReportRequest &r)
{
    using Kind = engine::Transform::Kind;
    // pprof applies focus and ignore to the whole stacks first, then hides; the order of the chain does the same.
    for (const auto &[option, kind] :
         {std::pair{QStringLiteral("focus"), Kind::Focus}, std::pair{QStringLiteral("ignore"), Kind::Ignore},
          std::pair{QStringLiteral("hide"), Kind::Hide}}) {
        for (const QString &value : parser.values(option))
            r.transforms.push_back({kind, value.toStdString()});
    }
}

ParsedRequest parseRequest(const QCommandLineParser &parser)
{
    ParsedRequest p;
    ReportRequest &r = p.request;
    const QStringList files = parser.positionalArguments();
    if (files.size() != 1) {
        p.usageError = usageError("expected exactly one FILE (see emberline report --help)");
        return p;
    }
    r.file = files.first().toStdString();
    r.options.sampleType = parser.value(QStringLiteral("sample-type")).toStdString();
    r.options.fileName = r.file;
    r.format = parser.value(QStringLiteral("format"));
    if (parser.isSet(QStringLiteral("json"))) {
        if (parser.isSet(QStringLiteral("format")) && r.format != QLatin1String("json")) {
            p.usageError = usageError("--json and --format ", r.format + QStringLiteral(" disagree"));
            return p;
        }
        r.format = QStringLiteral("json");
    }
    if (r.format != QLatin1String("text") && r.format != QLatin1String("json") && r.format != QLatin1String("folded")) {
        p.usageError = usageError("--format must be text, json or folded, not ", r.format);
        return p;
    }
    r.options.json = r.format == QLatin1String("json");
    if (parser.isSet(QStringLiteral("top"))) {
        bool ok = false;
        r.options.top = parser.value(QStringLiteral("top")).toInt(&ok);
        if (!ok || r.options.top < 0) {
            p.usageError = usageError("--top needs a whole number, got ", parser.value(QStringLiteral("top")));
            return p;
        }
    }
    r.base = parser.value(QStringLiteral("base")).toStdString();
    r.options.normalize = parser.isSet(QStringLiteral("normalize"));
    if (r.options.normalize && r.base.empty()) {
        p.usageError = usageError("--normalize needs --base");
        return p;
    }
    r.list = parser.isSet(QStringLiteral("list"));
    r.listPattern = parser.value(QStringLiteral("list")).toStdString();
    for (const QString &root : parser.values(QStringLiteral("source-root")))
        r.sourceRoots.push_back(root.toStdString());
    r.disasm = parser.isSet(QStringLiteral("disasm"));
    r.disasmPattern = parser.value(QStringLiteral("disasm")).toStdString();
    for (const QString &directory : parser.values(QStringLiteral("debug-dir")))
        r.debugDirectories.push_back(directory.toStdString());
    if ((r.list || r.disasm) && !r.base.empty())
        p.usageError =
            usageError(r.list ? "--list does not combine with --base" : "--disasm does not combine with --base");
    else if (r.list && r.disasm)
        p.usageError = usageError("--list and --disasm do not combine");
    else if (r.format == QLatin1String("folded") && (r.list || r.disasm || !r.base.empty()))
        p.usageError = usageError("--format folded does not combine with --list, --disasm or --base");
    addTransforms(parser, r);
    return p;
}

} // namespace

Verb reportVerb()
{
    return {QStringLiteral("report"), QStringLiteral("report [options] FILE [--base BASE]"), configureReportParser,
            runReport};
}

void configureReportParser(QCommandLineParser &parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Print the top functions of a profile by self value, with self and total per\n"
                       "function and the totals of every sample type, like `go tool pprof -top`.\n"
                       "With --base, each function's self and total are FILE minus BASE, ordered by the\n"
                       "size of the change, like `go tool pprof -diff_base=BASE -top FILE`.\n"
                       "With --list, each line of the matching functions with its self and total and\n"
                       "its source, like `go tool pprof -list`.\n"
                       "With --disasm, the machine instructions of the matching functions with their\n"
                       "self and total and the source lines interleaved, like `go tool pprof -disasm`,\n"
                       "from the binary found by build id (the recorded path, the debug directories,\n"
                       "then debuginfod when DEBUGINFOD_URLS is set).\n"
                       "FILE is a pprof file, a session folder, a perf.data file (read with `perf\n"
                       "script`), `perf script` output or folded stacks, told apart by their content.\n"
                       "Needs no display."));
    parser.addHelpOption();
    parser.addOptions({
        {QStringLiteral("sample-type"), QStringLiteral("Sample type to report (default: the profile's default)."),
         QStringLiteral("NAME")},
        {QStringLiteral("top"), QStringLiteral("Print only the first N functions."), QStringLiteral("N")},
        {QStringLiteral("json"), QStringLiteral("Print JSON instead of a table: sample_types (type, unit, total), "
                                                "samples, and functions (name, self, total; with --base also "
                                                "base_self and base_total; with --list, lines).")},
        {QStringLiteral("format"),
         QStringLiteral("text (the default), json (as --json), or folded: collapsed "
                        "stacks, `root;...;leaf VALUE`, one line per distinct stack."),
         QStringLiteral("FORMAT"), QStringLiteral("text")},
        {QStringLiteral("base"),
         QStringLiteral("Compare with BASE (any file FILE may be, or a session folder): "
                        "self and total become FILE minus BASE."),
         QStringLiteral("BASE")},
        {QStringLiteral("normalize"), QStringLiteral("With --base, scale BASE so that its total equals FILE's.")},
        {QStringLiteral("list"),
         QStringLiteral("Print each source line of the functions whose name matches REGEX, "
                        "with self and total, and the code when the file is found."),
         QStringLiteral("REGEX")},
        {QStringLiteral("disasm"),
         QStringLiteral("Print the instructions of the functions whose name matches REGEX, "
                        "with self and total, source lines interleaved."),
         QStringLiteral("REGEX")},
        {QStringLiteral("debug-dir"),
         QStringLiteral("With --disasm, look for binaries and debug files by build id "
                        "under DIR (repeatable; default /usr/lib/debug)."),
         QStringLiteral("DIR")},
        {QStringLiteral("source-root"),
         QStringLiteral("With --list or --disasm, also look for source files under DIR "
                        "(repeatable), for programs built elsewhere."),
         QStringLiteral("DIR")},
        {QStringLiteral("focus"),
         QStringLiteral("Keep only the samples with a frame matching REGEX (function "
                        "name, source file or binary)."),
         QStringLiteral("REGEX")},
        {QStringLiteral("ignore"), QStringLiteral("Drop the samples with a frame matching REGEX."),
         QStringLiteral("REGEX")},
        {QStringLiteral("hide"),
         QStringLiteral("Remove the frames matching REGEX from the stacks; their cost goes "
                        "to their callers."),
         QStringLiteral("REGEX")},
    });
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("A profile file (pprof, perf.data, perf script text or folded "
                                                "stacks), or a session folder."));
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
    const ParsedRequest parsed = parseRequest(parser);
    if (parsed.usageError != 0)
        return parsed.usageError;
    return runReportRequest(parsed.request);
}

} // namespace emberline::app
