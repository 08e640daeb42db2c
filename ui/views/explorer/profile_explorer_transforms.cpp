// ProfileExplorer: the transform chain, the bottom-up toggle, a frame's context menu and the message shown when a
// chain leaves no sample.
#include "ui/views/explorer/profile_explorer.h"

#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/analysis_runner.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/views/widgets/transform_chain_bar.h"
#include "ui/views/widgets/transform_menu.h"

#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace emberline::ui {

const engine::FrameTable &ProfileExplorer::shownFrames() const
{
    return m_analysis ? *m_analysis->loaded->frames : *m_loaded->frames;
}

void ProfileExplorer::connectTransformSignals()
{
    connect(m_runner, &AnalysisRunner::analysisFailed, this, &ProfileExplorer::onAnalysisFailed);
    connect(m_chain, &TransformChainBar::removeRequested, this, &ProfileExplorer::removeTransform);
    connect(m_chain, &TransformChainBar::clearRequested, this, &ProfileExplorer::clearTransforms);
    connect(m_undoTransform, &QPushButton::clicked, this,
            [this] { removeTransform(static_cast<int>(m_shape.transforms.size()) - 1); });
    connect(m_bottomUp, &QToolButton::toggled, this, &ProfileExplorer::setBottomUp);
    connect(m_flame, &FlameGraphView::frameContextMenuRequested, this, &ProfileExplorer::showFrameMenu);
    connect(m_topFunctions, &TopFunctionsView::frameContextMenuRequested, this, &ProfileExplorer::showFrameMenu);
}

void ProfileExplorer::createMessagePage()
{
    m_viewStack = new QStackedWidget(this);
    m_viewStack->setObjectName(QStringLiteral("explorerViews"));
    auto *page = new QWidget(m_viewStack);
    m_message = new QLabel(page);
    m_message->setObjectName(QStringLiteral("explorerMessage"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setMaximumWidth(720);
    m_undoTransform = new QPushButton(tr("Remove the Last Transform"), page);
    m_undoTransform->setObjectName(QStringLiteral("removeLastTransformButton"));
    auto *layout = new QVBoxLayout(page);
    layout->addStretch();
    layout->addWidget(m_message, 0, Qt::AlignHCenter);
    layout->addWidget(m_undoTransform, 0, Qt::AlignHCenter);
    layout->addStretch();
    m_viewStack->addWidget(m_splitter);
    m_viewStack->addWidget(page);
}

void ProfileExplorer::showMessage(const QString &message)
{
    m_message->setText(message);
    m_undoTransform->setVisible(!m_shape.transforms.empty());
    m_viewStack->setCurrentIndex(message.isEmpty() ? 0 : 1);
}

QString ProfileExplorer::emptyShapeMessage() const
{
    if (m_shape.transforms.empty() || !m_analysis || m_analysis->keptSamples > 0)
        return {};
    QStringList steps;
    for (const engine::Transform &step : m_shape.transforms)
        steps << QString::fromStdString(step.describe());
    return tr("Nothing to show: no sample of the chosen threads and time range is left after %1.")
        .arg(steps.join(tr(", then ")));
}

QString ProfileExplorer::message() const
{
    return m_viewStack->currentIndex() == 1 ? m_message->text() : QString();
}

void ProfileExplorer::onAnalysisFailed(const QString &message)
{
    showMessage(tr("Nothing to show: %1.").arg(message));
    updateStatusLine();
}

void ProfileExplorer::addTransform(engine::Transform step)
{
    engine::ProfileShape shape = m_shape;
    shape.transforms.push_back(std::move(step));
    setShape(std::move(shape));
}

void ProfileExplorer::removeTransform(int index)
{
    if (index < 0 || index >= static_cast<int>(m_shape.transforms.size()))
        return;
    engine::ProfileShape shape = m_shape;
    shape.transforms.erase(shape.transforms.begin() + index);
    setShape(std::move(shape));
}

void ProfileExplorer::clearTransforms()
{
    engine::ProfileShape shape = m_shape;
    shape.transforms.clear();
    setShape(std::move(shape));
}

namespace {

bool hidesInterpreter(const engine::Transform &step)
{
    return step.kind == engine::Transform::Kind::HideInterpreter;
}

} // namespace

bool ProfileExplorer::interpreterFramesShownByDefault()
{
    return QSettings().value(QStringLiteral("view/interpreterFrames"), false).toBool();
}

void ProfileExplorer::settleInterpreterFrames()
{
    if (m_interpreterSettled || !m_loaded || !m_loaded->interpreterFrames)
        return;
    // The first profile with the interpreter's frames starts the chain hiding them unless the view option shows
    // them; after that the chain is the user's: removing the step shows them in this tab alone.
    m_interpreterSettled = true;
    if (interpreterFramesShownByDefault() ||
        std::any_of(m_shape.transforms.begin(), m_shape.transforms.end(), hidesInterpreter))
        return;
    m_shape.transforms.insert(m_shape.transforms.begin(),
                              engine::Transform{engine::Transform::Kind::HideInterpreter, {}});
    m_chain->setChain(m_shape.transforms);
}

void ProfileExplorer::setInterpreterFramesShown(bool shown)
{
    engine::ProfileShape shape = m_shape;
    const bool hiding = std::any_of(shape.transforms.begin(), shape.transforms.end(), hidesInterpreter);
    if (shown && hiding) {
        std::erase_if(shape.transforms, hidesInterpreter);
    } else if (!shown && !hiding && m_loaded && m_loaded->interpreterFrames) {
        shape.transforms.insert(shape.transforms.begin(),
                                engine::Transform{engine::Transform::Kind::HideInterpreter, {}});
    } else {
        return;
    }
    setShape(std::move(shape));
}

bool ProfileExplorer::hidesInterpreterFrames() const
{
    return std::any_of(m_shape.transforms.begin(), m_shape.transforms.end(), hidesInterpreter);
}

void ProfileExplorer::setBottomUp(bool bottomUp)
{
    if (bottomUp == m_shape.inverted)
        return;
    engine::ProfileShape shape = m_shape;
    shape.inverted = bottomUp;
    setShape(std::move(shape));
}

void ProfileExplorer::setShape(engine::ProfileShape shape)
{
    m_shape = std::move(shape);
    m_chain->setChain(m_shape.transforms);
    {
        const QSignalBlocker blocker(m_bottomUp);
        m_bottomUp->setChecked(m_shape.inverted);
    }
    requestAnalysis();
}

void ProfileExplorer::translateSelection(const std::shared_ptr<const engine::FrameTable> &to)
{
    const engine::FrameTable &from = shownFrames();
    if (m_selectedFrame == UINT32_MAX || &from == to.get())
        return;
    const uint32_t frame = m_selectedFrame;
    const auto moved = FlameGraphView::translateFrames({&frame, 1}, from, *to);
    m_selectedFrame = moved.empty() ? UINT32_MAX : moved.front();
}

QMenu *ProfileExplorer::createFrameMenu(uint32_t frame)
{
    if (frame >= shownFrames().size())
        return nullptr;
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("frameMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    QAction *source = menu->addAction(tr("Show Source"), this, [this, frame] {
        selectFrame(frame);
        showSource();
    });
    source->setObjectName(QStringLiteral("showSourceMenuAction"));
    QAction *disassembly = menu->addAction(tr("Show Disassembly"), this, [this, frame] {
        selectFrame(frame);
        showDisassembly();
    });
    disassembly->setObjectName(QStringLiteral("showDisassemblyMenuAction"));
    QAction *sandwich = menu->addAction(tr("Show Callers and Callees (Sandwich)"), this, [this, frame] {
        selectFrame(frame);
        showSandwich();
    });
    sandwich->setObjectName(QStringLiteral("showSandwichMenuAction"));
    menu->addSeparator();
    const QString name = QString::fromStdString(shownFrames().frame(frame).name);
    addTransformActions(menu, name, [this](engine::Transform step) { addTransform(std::move(step)); });
    return menu;
}

void ProfileExplorer::showFrameMenu(uint32_t frame, const QPoint &globalPos)
{
    if (QMenu *menu = createFrameMenu(frame))
        menu->popup(globalPos);
}

} // namespace emberline::ui
