#include "ui/views/explorer/sandwich_view.h"

#include "ui/common/value_text.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace emberline::ui {

SandwichView::SandwichView(QWidget *parent) : QWidget(parent)
{
    setupUi();
}

void SandwichView::setupUi()
{
    setObjectName(QStringLiteral("sandwichView"));
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("sandwichTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("sandwichMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_splitter = new QSplitter(Qt::Vertical, this);
    m_callers = new FlameGraphView(m_splitter);
    m_callers->setObjectName(QStringLiteral("sandwichCallers"));
    m_callers->setOrientation(FlameGraphLayout::Orientation::RootAtBottom);
    m_callees = new FlameGraphView(m_splitter);
    m_callees->setObjectName(QStringLiteral("sandwichCallees"));
    m_callees->setOrientation(FlameGraphLayout::Orientation::RootAtTop);
    m_splitter->addWidget(m_callers);
    m_splitter->addWidget(m_callees);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_title);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_splitter, 1);
    connect(m_callers, &FlameGraphView::frameClicked, this, &SandwichView::frameActivated);
    connect(m_callees, &FlameGraphView::frameClicked, this, &SandwichView::frameActivated);
    setMessage(tr("Select a function to see its callers above it and its callees below it."));
}

void SandwichView::setMessage(const QString &message)
{
    m_title->clear();
    m_message->setText(message);
    m_message->setVisible(true);
    m_splitter->setVisible(false);
}

void SandwichView::setSandwich(std::shared_ptr<const engine::Sandwich> sandwich,
                               const std::shared_ptr<const engine::FrameTable> &frames,
                               const std::shared_ptr<const std::vector<QString>> &names, const std::string &unit,
                               bool bottomUp)
{
    m_sandwich = std::move(sandwich);
    std::shared_ptr<const engine::CallTree> up(m_sandwich, &m_sandwich->callers);
    std::shared_ptr<const engine::CallTree> down(m_sandwich, &m_sandwich->callees);
    if (bottomUp)
        std::swap(up, down);
    m_callers->setTree(std::move(up), frames, unit, false, names);
    m_callees->setTree(std::move(down), frames, unit, false, names);
    m_callers->setSelectedFrame(m_sandwich->frame);
    m_callees->setSelectedFrame(m_sandwich->frame);
    const QString name = QString::fromStdString(frames->frame(m_sandwich->frame).name);
    m_title->setText(tr("%1 — total %2, self %3 — callers above, callees below")
                         .arg(name, valueText(m_sandwich->total, unit), valueText(m_sandwich->self, unit)));
    m_message->setVisible(false);
    m_splitter->setVisible(true);
}

QString SandwichView::title() const
{
    return m_title->text();
}

QString SandwichView::message() const
{
    return m_message->isVisibleTo(this) ? m_message->text() : QString();
}

} // namespace emberline::ui
