#include "engine/upload/upload_logging.h"

Q_LOGGING_CATEGORY(lcUpload, "emberline.upload", QtWarningMsg)
