#include "engine/report/report_common.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace emberline::engine {

Result<QRegularExpression> functionPattern(const std::string &option, const std::string &pattern)
{
    QRegularExpression re(QString::fromStdString(pattern));
    if (!re.isValid())
        return makeError(Error::Code::Invalid, option + ": '" + pattern + "' is not a valid regular expression: " +
                                                   re.errorString().toStdString());
    return re;
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
