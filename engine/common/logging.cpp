#include "engine/common/logging.h"

Q_LOGGING_CATEGORY(lcPprof, "emberline.pprof", QtWarningMsg)
Q_LOGGING_CATEGORY(lcModel, "emberline.model", QtWarningMsg)
Q_LOGGING_CATEGORY(lcSession, "emberline.session", QtWarningMsg)
