#pragma once

#include <QLoggingCategory>

// Symbolization: modules that could not be opened, build ids that no longer match, missing debug info.
Q_DECLARE_LOGGING_CATEGORY(lcSymbols)
