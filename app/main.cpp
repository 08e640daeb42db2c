// `emberline`: the command-line verbs (`record`, `report`) run in this program, which links the engine and Qt's core
// alone; every other command line is the window's, whose program (emberline-gui, app/gui_main.cpp) is installed
// beside this one and started in its place. A verb never loads the window's libraries (Qt's widgets, charts and
// graphics, X11, fonts, OpenGL: about 40 shared libraries, whose loading and symbol binding was the larger part of a
// verb's start).
#include "app/cli.h"
#include "app/command_line.h"
#include "engine/common/huge_page_malloc.h"

#include <QCoreApplication>
#include <QStringList>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

using namespace emberline::app;

namespace {

// The window's program, beside this one: the same folder as built and as installed.
std::string windowProgram()
{
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return {};
    self[n] = '\0';
    std::string path(self);
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1) + "emberline-gui";
}

} // namespace

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
    const std::string window = windowProgram();
    if (!window.empty()) {
        // With the tunable for huge pages, so that the window's program starts once, not twice.
        emberline::engine::execWithHugePageMalloc(window.c_str(), argv);
        ::execv(window.c_str(), argv);
    }
    std::fprintf(stderr, "emberline: cannot start the window's program %s: %s\n",
                 window.empty() ? "(emberline-gui)" : window.c_str(), std::strerror(errno));
    return 127;
}
