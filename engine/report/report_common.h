#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// What the per-function reports (--list, --disasm) share.

// The regular expression of `option` (e.g. "--list"); one that does not compile is an error naming the option,
// the pattern and why.
Result<QRegularExpression> functionPattern(const std::string &option, const std::string &pattern);

// The functions a per-function report covers, those whose name the pattern matches anywhere, and what they are
// costed by: the sample type's value of every stack.
struct FunctionSelection {
    QRegularExpression pattern;
    int typeIndex = 0;
    std::vector<int64_t> perStack;
    int64_t grandTotal = 0; // the sum of perStack
    std::string unit;       // the sample type's

    bool matches(const std::string &name) const;
};

// The selection of `option`'s `pattern` in sample type `sampleType` (empty: the profile's default); an error when
// the pattern does not compile or the profile has no such sample type.
Result<FunctionSelection> selectFunctions(const Profile &profile, const std::string &option, const std::string &pattern,
                                          const std::string &sampleType);

// A text listing's self and total columns ("." for nothing), each 10 characters wide.
std::string costRow(int64_t self, int64_t total, const std::string &unit);

// {"type", "unit", "functions"}: a per-function report's JSON, indented, in sample type `typeIndex`'s unit.
std::string functionsJson(const Profile &profile, int typeIndex, const QJsonArray &functions);

} // namespace emberline::engine
