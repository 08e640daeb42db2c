#include "ui/views/explorer/sandwich_view.h"

#include "ui/common/value_text.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QEvent>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

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
    // Wrapped: on one line its width was the detail pane's least, which took the top-functions table's room.
    m_title->setWordWrap(true);
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
    // A row each at least (fitPanes shares the rest): a flame graph's own minimum, three rows, is more than a short
    // tab has for two of them (a window at 2× scale), and the splitter then halves the height whatever the rows.
    for (FlameGraphView *view : {m_callers, m_callees})
        view->setMinimumHeight(static_cast<int>(view->layout().rowHeight()));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_title);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_splitter, 1);
    m_splitter->installEventFilter(this);
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
    fitPanes(); // again when the splitter, shown just now, gets its size
}

bool SandwichView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_splitter && event->type() == QEvent::Resize)
        fitPanes();
    return QWidget::eventFilter(watched, event);
}

void SandwichView::fitPanes()
{
    const int total = m_splitter->height() - m_splitter->handleWidth();
    const int row = static_cast<int>(m_callers->layout().rowHeight());
    if (!m_sandwich || !m_splitter->isVisible() || total <= 0 || row <= 0)
        return;
    const int up = m_callers->contentHeightHint();
    const int down = m_callees->contentHeightHint();
    int callers = 0;
    if (up + down <= total) {
        callers = up + (total - up - down) / 2; // both whole, the room left shared
    } else {
        // By their rows, each keeping a few when it has them; the callers' rows, drawn up from the function at the
        // bottom, fill their pane exactly, so that the row at its top is whole.
        const int least = 3 * row;
        callers = static_cast<int>(static_cast<double>(total) * up / (up + down));
        callers =
            std::clamp(callers, std::min(up, least), std::max(std::min(up, least), total - std::min(down, least)));
        callers = std::max(row, std::min(callers, total - std::min(down, row)) / row * row); // the callees keep a row
    }
    const QList<int> sizes = m_splitter->sizes();
    if (sizes.value(0) != callers || sizes.value(1) != total - callers)
        m_splitter->setSizes({callers, total - callers});
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
