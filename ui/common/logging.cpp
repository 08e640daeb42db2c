#include "ui/common/logging.h"

Q_LOGGING_CATEGORY(lcUiLoad, "emberline.ui.load", QtWarningMsg)
Q_LOGGING_CATEGORY(lcUiAnalysis, "emberline.ui.analysis", QtWarningMsg)
Q_LOGGING_CATEGORY(lcUiWindow, "emberline.ui.window", QtWarningMsg)
