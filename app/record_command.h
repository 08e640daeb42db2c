#pragma once

#include "app/cli.h"

#include <QCommandLineParser>
#include <QStringList>

namespace emberline::app {

// `emberline record [OPTIONS] (--pid PID | -- COMMAND [ARGS...])`: profiles without a GUI.
Verb recordVerb();
void configureRecordParser(QCommandLineParser &parser);
// Returns the exit code: the launched program's own status, or non-zero with a message when profiling is
// impossible.
int runRecord(const QStringList &args);

} // namespace emberline::app
