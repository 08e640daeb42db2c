#include "app/cli.h"

#include <QCoreApplication>

int main(int argc, char **argv)
{
    if (argc >= 2 && qstrcmp(argv[1], "report") == 0) {
        QCoreApplication app(argc, argv);
        QStringList args = QCoreApplication::arguments();
        args.removeAt(1);
        return emberline::app::runReport(args);
    }
    return 0;
}
