#pragma once

#include <QLoggingCategory>

// Logging categories of the viewer; enable with QT_LOGGING_RULES="emberline.ui.*.debug=true".
Q_DECLARE_LOGGING_CATEGORY(lcUiLoad)
Q_DECLARE_LOGGING_CATEGORY(lcUiAnalysis)
Q_DECLARE_LOGGING_CATEGORY(lcUiWindow)
