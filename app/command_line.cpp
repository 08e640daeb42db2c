// The window's command line (command_line.h).
#include "app/command_line.h"

#include "app/cli.h"
#include "engine/import/text_format.h"

#include <QCoreApplication>
#include <QFileInfo>

#include <cstdio>
#include <cstring>

#include <sys/stat.h>

namespace emberline::app {
namespace {

// The GUI's usages; `emberline --help` adds every verb's.
QStringList guiUsages()
{
    return {QStringLiteral("[options] [FILE...]"), QStringLiteral("--diff BASE NEW"),
            QStringLiteral("--record -- COMMAND [ARGS...]"), QStringLiteral("--attach PID")};
}

} // namespace

void setApplicationNames()
{
    QCoreApplication::setOrganizationName(QStringLiteral("Emberline"));
    QCoreApplication::setApplicationName(QStringLiteral("Emberline"));
    QCoreApplication::setApplicationVersion(QStringLiteral(EMBERLINE_VERSION));
}

// The GUI's command line. The parser knows the GUI's options only; the verbs are dispatched before it runs, and
// --help appends their own help (app/cli.h).
void configureParser(QCommandLineParser &parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Emberline: a desktop profiler for native Linux programs.\n"
                       "Without a command, opens the window and each FILE in a tab. FILE is a pprof\n"
                       "profile (profile.proto), gzip-compressed or raw, as written by Go, Datadog's\n"
                       "profilers or Emberline."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption(QCommandLineOption(QStringLiteral("record"),
                                        QStringLiteral("Open the window straight into a live session of COMMAND, "
                                                       "given after --: emberline --record -- COMMAND [ARGS...]")));
    parser.addOption(QCommandLineOption(QStringLiteral("memory"),
                                        QStringLiteral("With --record or --attach: profile memory too "
                                                       "(allocations, the live heap, leaks), every 512 KiB allocated "
                                                       "on average; an attached program's from the attach on.")));
    parser.addOption(QCommandLineOption(QStringLiteral("attach"),
                                        QStringLiteral("Open the window straight into a live session attached to "
                                                       "the running process PID."),
                                        QStringLiteral("PID")));
    parser.addOption(QCommandLineOption(QStringLiteral("diff"),
                                        QStringLiteral("Open the window comparing two profiles: emberline --diff BASE "
                                                       "NEW (each a .pprof file or a session folder). The flame "
                                                       "graph's widths come from NEW; red grew, blue shrank.")));
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("pprof profiles to open."),
                                 QStringLiteral("[FILE...]"));
}

// --diff BASE NEW: both must exist; an error names the one that does not.
QString diffError(const QCommandLineParser &parser)
{
    const QStringList files = parser.positionalArguments();
    if (files.size() != 2)
        return QStringLiteral("--diff needs exactly two profiles, BASE then NEW (got %1)").arg(files.size());
    const QStringList sides{QStringLiteral("BASE"), QStringLiteral("NEW")};
    for (int i = 0; i < 2; ++i) {
        if (!QFileInfo::exists(files[i]))
            return QStringLiteral("--diff: %1 %2 does not exist").arg(sides[i], files[i]);
    }
    return {};
}

bool asksForInformation(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (qstrcmp(argv[i], "--") == 0)
            return false;
        for (const char *option : {"-h", "--help", "-?", "--help-all", "-v", "--version"}) {
            if (qstrcmp(argv[i], option) == 0)
                return true;
        }
    }
    return false;
}

// --help and --version print and exit without opening a display.
int printInformation(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    setApplicationNames();
    QCommandLineParser parser;
    configureParser(parser);
    if (!parser.parse(QCoreApplication::arguments())) {
        std::fprintf(stderr, "emberline: %s\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(emberline::app::topLevelHelp(parser, guiUsages())), stdout);
        return 0;
    }
    parser.process(app); // --help-all and --version: prints and exits
    return 0;
}

// --diff with a missing file or the wrong count is reported before the window system starts, so that it says
// what is wrong without a display too. Returns the exit status, 0 when the window may open.
int checkDiffArguments(int argc, char **argv)
{
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);
    const qsizetype dashes = arguments.indexOf(QStringLiteral("--"));
    if (!arguments.mid(0, dashes < 0 ? arguments.size() : dashes).contains(QStringLiteral("--diff")))
        return 0;
    QCommandLineParser parser;
    configureParser(parser);
    if (!parser.parse(dashes < 0 ? arguments : arguments.mid(0, dashes)))
        return 0; // the full parse below reports it
    if (const QString error = diffError(parser); !error.isEmpty()) {
        std::fprintf(stderr, "emberline: %s\n(see emberline --help)\n", qPrintable(error));
        return 2;
    }
    return 0;
}

// Whether the restart for huge pages (engine/common/huge_page_malloc.h) pays: it costs one more start of the
// program, tens of milliseconds, and pays back where a profile's tables grow large. `report` on `perf script` or
// folded-stack text reads its input line by line into tables that stay small for the text's size (a gigabyte of
// text is seconds of reading, not of page faults): there the restart would be most of the difference from perf.
// Arguments that are files are told by their content, as the reader tells them. `record` of time alone keeps tables
// of its distinct stacks (a few megabytes for a long session), while the restart is a fifth of a short session's own
// CPU; with --memory its live blocks and allocation stacks may run to millions, and the restart pays.
bool hugePagesPay(int argc, char **argv) noexcept
try {
    if (argc >= 2 && std::strcmp(argv[1], "record") == 0) {
        for (int i = 2; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
            if (std::strncmp(argv[i], "--memory", 8) == 0 || std::strncmp(argv[i], "--alloc-interval", 16) == 0)
                return true;
        return false;
    }
    if (argc < 3 || std::strcmp(argv[1], "report") != 0)
        return true;
    bool text = false;
    for (int i = 2; i < argc; ++i) {
        if (argv[i][0] == '-')
            continue;
        struct stat st {};
        if (::stat(argv[i], &st) != 0)
            continue; // an option's value
        if (!S_ISREG(st.st_mode))
            return true; // a session folder: pprof flushes
        const auto format = emberline::engine::sniffFileFormat(argv[i]);
        if (!format)
            continue;
        if (format.value() != emberline::engine::ProfileFormat::PerfScript &&
            format.value() != emberline::engine::ProfileFormat::Folded)
            return true;
        text = true;
    }
    return !text;
} catch (...) {
    return true; // could not tell: the restart as for any other command
}

} // namespace emberline::app
