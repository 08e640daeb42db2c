// `emberline`: the command-line verbs (`record`, `report`) run in this program, which links the engine and Qt's core
// alone; every other command line is the window's, whose program (emberline-gui, app/gui_main.cpp) is installed
// beside this one and started in its place. A verb never loads the window's libraries (Qt's widgets, charts and
// graphics, X11, fonts, OpenGL: about 30 shared libraries, whose loading and symbol binding was the larger part of a
// verb's start).
#include "app/cli.h"
#include "app/command_line.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/common/install_paths.h"

#include <QCoreApplication>
#include <QStringList>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

using namespace emberline::app;

int main(int argc, char **argv)
{
    for (const Verb &verb : verbs()) {
        if (argc >= 2 && verb.name == QLatin1String(argv[1])) {
            if (hugePagesPay(argc, argv))
                emberline::engine::useHugePageMalloc(argv);
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
    const std::string window = emberline::engine::installedProgramFile("emberline-gui");
    if (!window.empty()) {
        // With the tunable for huge pages, so that the window's program starts once, not twice.
        emberline::engine::execWithHugePageMalloc(window.c_str(), argv);
        ::execv(window.c_str(), argv);
    }
    std::fprintf(stderr, "emberline: cannot start the window's program %s: %s\n",
                 window.empty() ? "(emberline-gui)" : window.c_str(), std::strerror(errno));
    return 127;
}
