#pragma once

#include <QLoggingCategory>

// One logging category per engine module; enable with QT_LOGGING_RULES="emberline.*.debug=true".
Q_DECLARE_LOGGING_CATEGORY(lcPprof)
Q_DECLARE_LOGGING_CATEGORY(lcModel)
Q_DECLARE_LOGGING_CATEGORY(lcSession)
