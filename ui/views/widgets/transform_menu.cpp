#include "ui/views/widgets/transform_menu.h"

#include <QAction>
#include <QMenu>
#include <QRegularExpression>

namespace emberline::ui {

void addTransformActions(QMenu *menu, const QString &functionName, const std::function<void(engine::Transform)> &apply)
{
    using Kind = engine::Transform::Kind;
    const std::string exact =
        (QLatin1Char('^') + QRegularExpression::escape(functionName) + QLatin1Char('$')).toStdString();
    const std::string name = functionName.toStdString();
    struct Item {
        QString text;
        const char *objectName;
        Kind kind;
        const std::string &pattern;
        QString tip;
    };
    const Item items[] = {
        {QObject::tr("Focus on %1"), "focusAction", Kind::Focus, exact,
         QObject::tr("Keep only the samples that pass through this function")},
        {QObject::tr("Ignore %1"), "ignoreAction", Kind::Ignore, exact,
         QObject::tr("Drop the samples that pass through this function")},
        {QObject::tr("Hide %1"), "hideAction", Kind::Hide, exact,
         QObject::tr("Remove this function's frames; its cost goes to its callers")},
        {QObject::tr("Collapse Recursion of %1"), "collapseRecursionAction", Kind::CollapseRecursion, name,
         QObject::tr("Make recursive calls of this function one call")},
        {QObject::tr("Merge %1 into Caller"), "mergeIntoCallerAction", Kind::MergeIntoCaller, name,
         QObject::tr("Remove this function's frames; its cost goes to its caller")},
    };
    QString shown = functionName;
    if (shown.size() > 60)
        shown = shown.left(57) + QStringLiteral("…");
    for (const Item &item : items) {
        QAction *action = menu->addAction(item.text.arg(shown));
        action->setObjectName(QString::fromLatin1(item.objectName));
        action->setToolTip(item.tip);
        engine::Transform step{item.kind, item.pattern};
        QObject::connect(action, &QAction::triggered, menu, [apply, step] { apply(step); });
    }
}

} // namespace emberline::ui
