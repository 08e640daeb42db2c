#include "ui/common/source_roots.h"

#include <QSettings>

namespace emberline::ui {
namespace {

const QString kRootsKey = QStringLiteral("sourceRoots");

} // namespace

QStringList SourceRoots::folders() const
{
    return QSettings().value(kRootsKey).toStringList();
}

void SourceRoots::setFolders(const QStringList &folders)
{
    QStringList kept;
    for (const QString &folder : folders) {
        if (!folder.isEmpty() && !kept.contains(folder))
            kept << folder;
    }
    QSettings().setValue(kRootsKey, kept);
}

std::vector<std::string> SourceRoots::forLocator() const
{
    std::vector<std::string> roots;
    for (const QString &folder : folders())
        roots.push_back(folder.toStdString());
    return roots;
}

} // namespace emberline::ui
