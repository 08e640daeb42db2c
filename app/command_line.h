#pragma once

#include <QCommandLineParser>
#include <QString>

namespace emberline::app {

// The window's command line, read by two programs: `emberline`, which runs the verbs, answers --help and --version
// and reports a mistaken --diff without starting the window, and the window's own program (app/gui_main.cpp).

// The organization, application name and version QSettings and --version use.
void setApplicationNames();
// The GUI's options. The parser knows the GUI's options only; the verbs are dispatched before it runs, and --help
// appends their own help (app/cli.h).
void configureParser(QCommandLineParser &parser);
// --diff BASE NEW: both must exist; an error names the one that does not. Empty when they do.
QString diffError(const QCommandLineParser &parser);
// Whether the arguments ask for --help or --version (before any "--").
bool asksForInformation(int argc, char **argv);
// --help and --version print and exit without opening a display; returns the exit status.
int printInformation(int argc, char **argv);
// --diff with a missing file or the wrong count is reported before the window system starts, so that it says what
// is wrong without a display too. Returns the exit status, 0 when the window may open.
int checkDiffArguments(int argc, char **argv);
// Whether the restart for huge pages (engine/common/huge_page_malloc.h) pays for these arguments.
bool hugePagesPay(int argc, char **argv) noexcept;

} // namespace emberline::app
