#pragma once

// Widget tests keep their settings and standard paths in a temporary folder, so that they never read or change
// the user's (or another test's) settings.

#include <QCoreApplication>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace emberline::ui::test {

inline void isolateSettings(const QTemporaryDir &dir, const char *application)
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("EmberlineTest"));
    QCoreApplication::setApplicationName(QLatin1String(application));
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.path());
}

} // namespace emberline::ui::test
