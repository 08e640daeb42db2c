#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cstdint>
#include <string>

namespace emberline::engine {

// What the per-function reports (--list, --disasm) share.

// The regular expression of `option` (e.g. "--list"); one that does not compile is an error naming the option,
// the pattern and why.
Result<QRegularExpression> functionPattern(const std::string &option, const std::string &pattern);

// A text listing's self and total columns ("." for nothing), each 10 characters wide.
std::string costRow(int64_t self, int64_t total, const std::string &unit);

// {"type", "unit", "functions"}: a per-function report's JSON, indented, in sample type `typeIndex`'s unit.
std::string functionsJson(const Profile &profile, int typeIndex, const QJsonArray &functions);

} // namespace emberline::engine
