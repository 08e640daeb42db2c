#include "ui/common/app_icon.h"

#include <QFile>

namespace emberline::ui {

QIcon applicationIcon()
{
    const QString path = QStringLiteral(":/icons/emberline.svg");
    return QFile::exists(path) ? QIcon(path) : QIcon();
}

} // namespace emberline::ui
