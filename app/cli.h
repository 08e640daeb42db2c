#pragma once

#include <QStringList>

namespace emberline::app {

// The command-line verbs that run without a GUI. Returns the process exit code.
int runReport(const QStringList &args);

} // namespace emberline::app
