// `emberline-gui`: the window. The `emberline` program (main.cpp) starts it in its own place for every command line
// that is not a verb, --help or --version; it is installed beside it.
#include "app/command_line.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/session/profiling_session.h"
#include "ui/common/app_icon.h"
#include "ui/common/color_scheme.h"
#include "ui/jobs/thread_scheduling.h"
#include "ui/window/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QPalette>
#include <QSettings>

#include <cstdio>

using namespace emberline::app;

namespace {

// What --record and --attach (each with --memory or not) ask for, with the Profile Process dialog's remembered
// frequency and flush period.
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
    // Memory of a launched program (its agent preloaded) or of a running one (its agent loaded into it).
    request.config.memory = parser.isSet(QStringLiteral("memory"));
    QSettings settings;
    request.config.frequency = settings.value(QStringLiteral("profileDialog/frequency"), 99).toInt();
    request.config.flushPeriodNs =
        static_cast<int64_t>(settings.value(QStringLiteral("profileDialog/flushPeriod"), 5).toInt()) * 1'000'000'000;
    return request;
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
    // Started by `emberline`, the tunable is set already and this puts the user's environment back.
    emberline::engine::useHugePageMalloc(argv);
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
