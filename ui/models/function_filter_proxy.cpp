#include "ui/models/function_filter_proxy.h"

#include "ui/common/model_roles.h"

namespace emberline::ui {

FunctionFilterProxy::FunctionFilterProxy(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
    setFilterKeyColumn(0);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setDynamicSortFilter(true);
}

void FunctionFilterProxy::setNameFilter(const QString &text)
{
    setFilterFixedString(text.trimmed());
}

} // namespace emberline::ui
