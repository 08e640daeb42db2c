#include "app/cli.h"
#include "app/record_command.h"
#include "engine/session/profiling_session.h"
#include "engine/session/record_session.h"
#include "ui/app_icon.h"
#include "ui/main_window.h"
#include "ui/jobs/thread_scheduling.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QSettings>

#include <cstdio>

namespace {

void setApplicationNames()
{
    QCoreApplication::setOrganizationName(QStringLiteral("Emberline"));
    QCoreApplication::setApplicationName(QStringLiteral("Emberline"));
    QCoreApplication::setApplicationVersion(QStringLiteral(EMBERLINE_VERSION));
}

// The GUI's command line. The parser knows the GUI's options only; the verbs are dispatched before it runs and
// described in the text that --help appends.
void configureParser(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Emberline: a desktop profiler for native Linux programs.\n"
        "Without a command, opens the window and each FILE in a tab. FILE is a pprof profile (profile.proto),\n"
        "gzip-compressed or raw, as written by Go, Datadog's profilers or Emberline."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption(QCommandLineOption(QStringLiteral("record"),
                                        QStringLiteral("Open the window straight into a live session of COMMAND, "
                                                       "given after --: emberline --record -- COMMAND [ARGS...]")));
    parser.addOption(QCommandLineOption(QStringLiteral("attach"),
                                        QStringLiteral("Open the window straight into a live session attached to "
                                                       "the running process PID."),
                                        QStringLiteral("PID")));
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("pprof profiles to open."),
                                 QStringLiteral("[FILE...]"));
}

// What --record and --attach ask for, with the Profile Process dialog's remembered frequency and flush period.
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
            request.error = QStringLiteral("--record needs a command after --: emberline --record -- COMMAND [ARGS...]");
        for (const QString &arg : command)
            request.config.command.push_back(arg.toStdString());
    } else {
        bool ok = false;
        request.config.pid = parser.value(QStringLiteral("attach")).toInt(&ok);
        if (!ok || request.config.pid <= 0)
            request.error = QStringLiteral("--attach needs a process id, got '%1'").arg(parser.value(QStringLiteral("attach")));
    }
    QSettings settings;
    request.config.frequency = settings.value(QStringLiteral("profileDialog/frequency"), 99).toInt();
    request.config.flushPeriodNs =
        static_cast<int64_t>(settings.value(QStringLiteral("profileDialog/flushPeriod"), 5).toInt()) * 1'000'000'000;
    return request;
}

QString helpText(const QCommandLineParser &parser)
{
    // Qt's first line names argv[0] (a build path, say); the usage is stated with the command's own name.
    QString text = parser.helpText();
    const qsizetype firstLineEnd = text.indexOf(QLatin1Char('\n'));
    text.replace(0, firstLineEnd + 1,
                 QStringLiteral("Usage: emberline [options] [FILE...]\n"
                                "       emberline --record -- COMMAND [ARGS...]\n"
                                "       emberline --attach PID\n"
                                "       emberline report [--sample-type NAME] [--top N] [--json] FILE\n"
                                "       emberline record [OPTIONS] (--pid PID | -- COMMAND [ARGS...])\n\n"));
    text += QStringLiteral(
        "\nCommands:\n"
        "  report FILE              Print the top functions of FILE by self value, with totals, like\n"
        "                           `go tool pprof -top`. Needs no display.\n"
        "    --sample-type NAME     Sample type to report (default: the profile's default sample type).\n"
        "    --top N                Print only the first N functions.\n"
        "    --json                 Print {\"sample_types\":[{\"type\",\"unit\",\"total\"}],\"samples\":N,\n"
        "                           \"functions\":[{\"name\",\"self\",\"total\"}]} instead of a table.\n"
        "  record                   Profile a program without the GUI: launch it (-- COMMAND ARGS) or attach\n"
        "                           to it (--pid PID); writes flush-NNNN.pprof every flush period and\n"
        "                           profile.pprof (the whole session) and prints a summary. Exits with the\n"
        "                           launched program's status.\n"
        "    --frequency HZ         Samples per second (default 99).\n"
        "    --duration SECONDS     Stop after this long (default: when the target exits, or on Ctrl+C).\n"
        "    --flush-period SECONDS Seconds between flushes, 1 to 60 (default 10).\n"
        "    --sampler NAME         perf or auto (default auto).\n"
        "    --output DIR           Where to write the profiles (default ./emberline-<time>).\n"
        "    --stack-size BYTES     User stack copied per sample (default 32768).\n"
        "    --upload               Also send every flush to Datadog, through the agent (DD_TRACE_AGENT_URL,\n"
        "                           DD_AGENT_HOST, DD_TRACE_AGENT_PORT; default localhost:8126) or agentless.\n"
        "    --service NAME, --env ENV, --version VERSION, --tags K:V,...\n"
        "                           Datadog tags (defaults DD_SERVICE, DD_ENV, DD_VERSION; --tags adds to DD_TAGS).\n"
        "    --agentless            Send to https://intake.profile.<DD_SITE> with an API key, not the agent.\n"
        "    --api-key-file FILE    API key file, owner-only (default DD_API_KEY or the key saved by the GUI).\n"
        "  See `emberline report --help` and `emberline record --help`.\n");
    return text;
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
        std::fputs(qPrintable(helpText(parser)), stdout);
        return 0;
    }
    parser.process(app); // --help-all and --version: prints and exits
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 2 && qstrcmp(argv[1], "report") == 0) {
        QCoreApplication app(argc, argv);
        QStringList args = QCoreApplication::arguments();
        args.removeAt(1);
        return emberline::app::runReport(args);
    }
    if (argc >= 2 && qstrcmp(argv[1], "record") == 0) {
        QCoreApplication app(argc, argv);
        QStringList args = QCoreApplication::arguments();
        args.removeAt(1);
        return emberline::app::runRecord(args);
    }
    if (asksForInformation(argc, argv))
        return printInformation(argc, argv);

    QApplication app(argc, argv);
    setApplicationNames();
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.emberline.Emberline"));
    QApplication::setWindowIcon(emberline::ui::applicationIcon());
    emberline::ui::requestPromptWakeups();
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
    int status = 0;
    {
        emberline::ui::MainWindow window;
        window.show();
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
