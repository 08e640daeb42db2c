// LiveSessionView: the Upload tab of a session started with upload on.
#include "ui/views/live/live_session_view.h"

#include "ui/upload/session_upload.h"
#include "ui/upload/upload_panel.h"

#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

namespace emberline::ui {

void LiveSessionView::attachUpload(SessionUpload *upload)
{
    Q_ASSERT(!m_upload);
    m_upload = upload;
    m_upload->setParent(this); // destroyed after the session (see the destructor)

    auto *page = new QWidget(this);
    m_uploadCounts = new QLabel(page);
    m_uploadCounts->setObjectName(QStringLiteral("uploadCounts"));
    m_uploadCounts->setWordWrap(true);
    m_uploadCounts->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *panel = new UploadPanel(page);
    panel->follow(m_upload->notifier());
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_uploadCounts);
    layout->addWidget(panel, 1);

    // The explorer moves into a tab of its own, next to the Upload tab.
    auto *tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("liveViewTabs"));
    tabs->setDocumentMode(true);
    const int at = m_splitter->indexOf(m_explorerStack);
    tabs->addTab(m_explorerStack, tr("Profile"));
    tabs->addTab(page, tr("Upload"));
    m_splitter->insertWidget(at, tabs);
    m_splitter->setStretchFactor(at, 5);

    connect(m_upload, &SessionUpload::changed, this, &LiveSessionView::updateUploadCounts);
    connect(m_upload, &SessionUpload::submittingChanged, this, &LiveSessionView::updateUploadCounts);
    updateUploadCounts();
}

void LiveSessionView::updateUploadCounts()
{
    const engine::UploaderCounters c = m_upload->counters();
    QString text = tr("Uploading to %1: %2 submitted, %3 sent, %4 refused, %5 failed, %6 dropped")
                       .arg(m_upload->endpoint())
                       .arg(c.submitted)
                       .arg(c.sent)
                       .arg(c.rejected)
                       .arg(c.failed)
                       .arg(c.dropped);
    if (!m_upload->isSubmitting())
        text += tr(" (paused: new flushes are kept on disk only)");
    if (m_upload->isFinished())
        text += tr(" (done)");
    else if (m_upload->isFinishing())
        text += tr(" (sending what is left…)");
    if (!m_upload->lastProblem().isEmpty())
        text += QLatin1Char('\n') + tr("Last problem: %1").arg(m_upload->lastProblem());
    m_uploadCounts->setText(text);
}

} // namespace emberline::ui
