#include "app/cli.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/import/text_format.h"
#include "engine/session/profiling_session.h"
#include "engine/session/record_session.h"
#include "ui/common/app_icon.h"
#include "ui/common/color_scheme.h"
#include "ui/jobs/thread_scheduling.h"
#include "ui/window/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QPalette>
#include <QSettings>

#include <cstdio>
#include <cstring>

#include <sys/stat.h>

namespace {

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
                                        QStringLiteral("With --record: profile memory too (allocations, the live "
                                                       "heap, leaks), every 512 KiB allocated on average.")));
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

// What --record (with --memory) and --attach ask for, with the Profile Process dialog's remembered frequency and
// flush period.
struct LiveRequest {
    bool wanted = false;
    emberline::engine::SessionConfig config;
    QString error;
};

LiveRequest liveRequest(const QCommandLineParser &parser, const QStringList &command)
{
    LiveRequest request;
    const bool record = parser.isSet(QStringLiteral("record"));
    const bool attach = parser.isSet(QStringLiteral("attach"));
    if (!record && !attach)
        return request;
    request.wanted = true;
    if (record && attach) {
        request.error = QStringLiteral("--record and --attach cannot be used together");
        return request;
    }
    if (record) {
        if (command.isEmpty())
            request.error =
                QStringLiteral("--record needs a command after --: emberline --record -- COMMAND [ARGS...]");
        for (const QString &arg : command)
            request.config.command.push_back(arg.toStdString());
    } else {
        bool ok = false;
        request.config.pid = parser.value(QStringLiteral("attach")).toInt(&ok);
        if (!ok || request.config.pid <= 0)
            request.error =
                QStringLiteral("--attach needs a process id, got '%1'").arg(parser.value(QStringLiteral("attach")));
    }
    if (parser.isSet(QStringLiteral("memory"))) {
        if (!record)
            request.error = QStringLiteral("--memory needs --record: the memory agent is loaded into a program "
                                           "as it starts, not into a running process");
        request.config.memory = true;
    }
    QSettings settings;
    request.config.frequency = settings.value(QStringLiteral("profileDialog/frequency"), 99).toInt();
    request.config.flushPeriodNs =
        static_cast<int64_t>(settings.value(QStringLiteral("profileDialog/flushPeriod"), 5).toInt()) * 1'000'000'000;
    return request;
}

// The GUI's usages; `emberline --help` adds every verb's.
QStringList guiUsages()
{
    return {QStringLiteral("[options] [FILE...]"), QStringLiteral("--diff BASE NEW"),
            QStringLiteral("--record -- COMMAND [ARGS...]"), QStringLiteral("--attach PID")};
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

} // namespace

// EMBERLINE_COLOR_SCHEME=dark gives the window Fusion's look with a dark palette, for desktops whose platform
// theme does not pass their dark scheme on to Qt applications.
static void applyColorScheme()
{
    if (qEnvironmentVariable("EMBERLINE_COLOR_SCHEME") != QLatin1String("dark"))
        return;
    QApplication::setStyle(QStringLiteral("Fusion"));
    QApplication::setPalette(emberline::ui::darkPalette());
}

int main(int argc, char **argv)
{
    if (hugePagesPay(argc, argv))
        emberline::engine::useHugePageMalloc(argv);
    for (const emberline::app::Verb &verb : emberline::app::verbs()) {
        if (argc >= 2 && verb.name == QLatin1String(argv[1])) {
            QCoreApplication app(argc, argv);
            QStringList args = QCoreApplication::arguments();
            args.removeAt(1);
            return verb.run(args);
        }
    }
    if (asksForInformation(argc, argv))
        return printInformation(argc, argv);
    if (const int status = checkDiffArguments(argc, argv); status != 0)
        return status;

    QApplication app(argc, argv);
    setApplicationNames();
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.emberline.Emberline"));
    QApplication::setWindowIcon(emberline::ui::applicationIcon());
    applyColorScheme();
    emberline::ui::requestPromptWakeups();
    emberline::ui::raiseGuiThread();
    // Everything after "--" is --record's command, untouched by option parsing.
    const QStringList arguments = QCoreApplication::arguments();
    const qsizetype dashes = arguments.indexOf(QStringLiteral("--"));
    QCommandLineParser parser;
    configureParser(parser);
    if (!parser.parse(dashes < 0 ? arguments : arguments.mid(0, dashes))) {
        std::fprintf(stderr, "emberline: %s\n(see emberline --help)\n", qPrintable(parser.errorText()));
        return 2;
    }
    const LiveRequest live = liveRequest(parser, dashes < 0 ? QStringList{} : arguments.mid(dashes + 1));
    if (!live.error.isEmpty()) {
        std::fprintf(stderr, "emberline: %s\n(see emberline --help)\n", qPrintable(live.error));
        return 2;
    }
    const bool diff = parser.isSet(QStringLiteral("diff"));
    if (diff) {
        if (const QString error = diffError(parser); !error.isEmpty()) {
            std::fprintf(stderr, "emberline: %s\n(see emberline --help)\n", qPrintable(error));
            return 2;
        }
    }
    int status = 0;
    {
        emberline::ui::MainWindow window;
        window.show();
        if (diff)
            window.openComparison(parser.positionalArguments().at(0), parser.positionalArguments().at(1));
        else
            window.openFiles(parser.positionalArguments());
        if (live.wanted)
            window.startSession(live.config);
        status = app.exec();
    }
    // Sessions still ending when the window closed write their last flush and profile.pprof; the event loop is
    // over, so waiting here blocks nothing.
    emberline::engine::ProfilingSession::waitForEndingSessions();
    return status;
}
