#include "ui/logging.h"

Q_LOGGING_CATEGORY(lcUiLoad, "emberline.ui.load")
Q_LOGGING_CATEGORY(lcUiAnalysis, "emberline.ui.analysis")
Q_LOGGING_CATEGORY(lcUiWindow, "emberline.ui.window")
