#include "ui/common/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace emberline::ui {
namespace {

const QString kKey = QStringLiteral("recentFiles");

} // namespace

QStringList RecentFiles::files() const
{
    QSettings settings;
    const QStringList stored = settings.value(kKey).toStringList();
    QStringList existing;
    for (const QString &path : stored) {
        if (QFileInfo::exists(path) && !existing.contains(path))
            existing << path;
    }
    if (existing != stored)
        settings.setValue(kKey, existing);
    return existing;
}

void RecentFiles::add(const QString &path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList list = files();
    list.removeAll(absolute);
    list.prepend(absolute);
    while (list.size() > kMaxEntries)
        list.removeLast();
    QSettings().setValue(kKey, list);
}

void RecentFiles::clear()
{
    QSettings().remove(kKey);
}

} // namespace emberline::ui
