#pragma once

#include <QCommandLineParser>
#include <QList>
#include <QString>
#include <QStringList>

namespace emberline::app {

// A command-line verb that runs without a GUI (`emberline report`, `emberline record`). Its parser is built by
// `configure` alone, which the verb calls to parse its arguments and `emberline --help` calls to describe it:
// the top-level help lists exactly the options the verb accepts.
struct Verb {
    QString name;
    QString usage; // what follows "emberline ": "report [options] FILE"
    void (*configure)(QCommandLineParser &parser) = nullptr;
    // `args` as QCoreApplication::arguments() without the verb; returns the process exit code.
    int (*run)(const QStringList &args) = nullptr;
};

// Every verb, in the order `emberline --help` lists them.
QList<Verb> verbs();

// Qt's help text for `parser` with "Usage: emberline <usage>" lines first (Qt's own first line names argv[0],
// a build path, say).
QString helpText(const QCommandLineParser &parser, const QStringList &usages);

// `emberline --help`: the GUI's help (its parser and usages, then every verb's usage), followed by each verb's
// own help as `emberline <verb> --help` prints it.
QString topLevelHelp(const QCommandLineParser &gui, const QStringList &guiUsages);

// `emberline report`: the top functions of a profile or a session folder.
Verb reportVerb();
void configureReportParser(QCommandLineParser &parser);
int runReport(const QStringList &args);

} // namespace emberline::app
