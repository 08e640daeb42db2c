#pragma once

#include <QLoggingCategory>

// The importers of other profilers' formats (folded stacks, perf script text, perf.data).
Q_DECLARE_LOGGING_CATEGORY(lcImport)
