#include "engine/import/import_logging.h"

Q_LOGGING_CATEGORY(lcImport, "emberline.import", QtWarningMsg)
