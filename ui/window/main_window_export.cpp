// MainWindow: File > Export Flame Graph as SVG / PNG and Save View as pprof, for the current profile tab.
#include "ui/window/main_window.h"

#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/view_exporter.h"
#include "ui/views/explorer/profile_explorer.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QStatusBar>

namespace emberline::ui {
namespace {

constexpr int kStatusMs = 6000;

QString suggestedName(const ProfileExplorer *explorer, const QString &suffix)
{
    const QFileInfo info(explorer->loaded().path);
    return info.dir().filePath(info.completeBaseName() + suffix);
}

} // namespace

void MainWindow::createExportActions(QMenu *file)
{
    m_exporter = new ViewExporter(this);
    connect(m_exporter, &ViewExporter::saved, this,
            [this](const QString &path) { statusBar()->showMessage(tr("Saved %1").arg(path), kStatusMs); });
    connect(m_exporter, &ViewExporter::failed, this,
            [this](const QString &message) { QMessageBox::warning(this, tr("Export"), message); });
    QMenu *menu = file->addMenu(tr("&Export"));
    menu->setObjectName(QStringLiteral("exportMenu"));
    QAction *svg = menu->addAction(tr("Flame Graph as &SVG…"), this, [this] { exportFlameGraph(true); });
    svg->setObjectName(QStringLiteral("exportSvgAction"));
    svg->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction *png = menu->addAction(tr("Flame Graph as &PNG…"), this, [this] { exportFlameGraph(false); });
    png->setObjectName(QStringLiteral("exportPngAction"));
    png->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    QAction *pprof = menu->addAction(tr("View as p&prof…"), this, &MainWindow::saveViewAsPprof);
    pprof->setObjectName(QStringLiteral("saveViewPprofAction"));
    pprof->setShortcut(QKeySequence::Save);
    connect(menu, &QMenu::aboutToShow, this, [this, menu] {
        const ProfileExplorer *explorer = currentExplorer();
        for (QAction *action : menu->actions())
            action->setEnabled(explorer && explorer->analysis() && explorer->message().isEmpty());
    });
    // The shortcuts work whatever the menu last showed: each action checks the current tab itself.
    connect(menu, &QMenu::aboutToHide, this, [menu] {
        for (QAction *action : menu->actions())
            action->setEnabled(true);
    });
}

void MainWindow::exportFlameGraph(bool svg)
{
    const ProfileExplorer *explorer = currentExplorer();
    if (!explorer || !explorer->analysis())
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, svg ? tr("Export Flame Graph as SVG") : tr("Export Flame Graph as PNG"),
        suggestedName(explorer, svg ? QStringLiteral("-flamegraph.svg") : QStringLiteral("-flamegraph.png")),
        svg ? tr("SVG pictures (*.svg)") : tr("PNG pictures (*.png)"));
    if (path.isEmpty())
        return;
    if (svg)
        m_exporter->saveSvg(path, explorer->flameGraph()->toSvg(QFileInfo(explorer->loaded().path).fileName()));
    else
        m_exporter->savePng(path, explorer->flameGraph()->toImage());
}

void MainWindow::saveViewAsPprof()
{
    const ProfileExplorer *explorer = currentExplorer();
    if (!explorer || !explorer->analysis())
        return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save View as pprof"),
                                                      suggestedName(explorer, QStringLiteral("-view.pprof")),
                                                      tr("pprof profiles (*.pprof *.pb.gz)"));
    if (path.isEmpty())
        return;
    m_exporter->savePprof(path, explorer->loadedProfile(), explorer->shape().transforms, explorer->analysis()->filter);
}

} // namespace emberline::ui
