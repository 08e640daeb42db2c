#include "engine/report/report_common.h"

#include "engine/model/units.h"

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
