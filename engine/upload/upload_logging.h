#pragma once

#include <QLoggingCategory>

// The uploader's logging category; enable with QT_LOGGING_RULES="emberline.upload.debug=true".
// Nothing logged here ever contains an API key.
Q_DECLARE_LOGGING_CATEGORY(lcUpload)
