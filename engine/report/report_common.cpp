#include "engine/report/report_common.h"

#include "engine/model/sample_filter.h"
#include "engine/model/units.h"
#include "engine/report/sample_type.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

namespace emberline::engine {

Result<QRegularExpression> functionPattern(const std::string &option, const std::string &pattern)
{
    QRegularExpression re(QString::fromStdString(pattern));
    if (!re.isValid())
        return makeError(Error::Code::Invalid, option + ": '" + pattern + "' is not a valid regular expression: " +
                                                   re.errorString().toStdString());
    return re;
}

bool FunctionSelection::matches(const std::string &name) const
{
    return pattern.match(QString::fromStdString(name)).hasMatch();
}

Result<FunctionSelection> selectFunctions(const Profile &profile, const std::string &option, const std::string &pattern,
                                          const std::string &sampleType)
{
    auto re = functionPattern(option, pattern);
    if (!re)
        return re.error();
    auto typeIndex = resolveSampleType(profile, sampleType);
    if (!typeIndex)
        return typeIndex.error();
    FunctionSelection selection;
    selection.pattern = std::move(re).value();
    selection.typeIndex = typeIndex.value();
    selection.perStack = valuesPerStack(profile, selection.typeIndex, {});
    for (int64_t v : selection.perStack)
        selection.grandTotal += v;
    selection.unit = profile.str(profile.sampleTypes()[static_cast<size_t>(selection.typeIndex)].unit);
    return selection;
}

std::string costRow(int64_t self, int64_t total, const std::string &unit)
{
    char cells[64];
    std::snprintf(cells, sizeof cells, "%10s %10s ", self ? formatValue(self, unit).c_str() : ".",
                  total ? formatValue(total, unit).c_str() : ".");
    return cells;
}

std::string functionsJson(const Profile &profile, int typeIndex, const QJsonArray &functions)
{
    QJsonObject root;
    const ValueType &type = profile.sampleTypes()[static_cast<size_t>(typeIndex)];
    root.insert(QStringLiteral("type"), QString::fromStdString(profile.str(type.type)));
    root.insert(QStringLiteral("unit"), QString::fromStdString(profile.str(type.unit)));
    root.insert(QStringLiteral("functions"), functions);
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

} // namespace emberline::engine
