// LiveSessionView: the end of a session (what happened, in words), its buttons, and saving its folder.
#include "ui/views/live/live_session_view.h"

#include "ui/views/live/health_view.h"
#include "ui/views/live/session_status_bar.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>

#include <cstring>

namespace emberline::ui {
namespace {

QString endText(const engine::SessionSummary &s, const QString &folder)
{
    QString what;
    if (s.targetExited && s.exitStatus > 128) {
        const int signal = s.exitStatus - 128;
        what = LiveSessionView::tr("The program crashed: it was killed by signal %1 (%2).")
                   .arg(signal)
                   .arg(QString::fromLocal8Bit(strsignal(signal)));
    } else if (s.targetExited && s.launched) {
        what = LiveSessionView::tr("The program exited with status %1.").arg(s.exitStatus);
    } else if (s.targetExited) {
        what = LiveSessionView::tr("The process exited.");
    } else {
        what = LiveSessionView::tr("The session was %1.").arg(QString::fromStdString(s.endReason));
    }
    if (s.saveErrors.empty())
        return LiveSessionView::tr("%1 The session has ended; the views keep all of its data, and its %2 flush(es) "
                                   "and merged profile are in %3.")
            .arg(what)
            .arg(s.flushes)
            .arg(folder);
    QStringList errors;
    for (const std::string &e : s.saveErrors)
        errors << QString::fromStdString(e);
    return LiveSessionView::tr("%1 The session has ended; the views keep all of its data, but %2 of its %3 "
                               "flush(es)%4 could not be saved in %5:\n%6")
        .arg(what)
        .arg(s.flushesNotSaved)
        .arg(s.flushes)
        .arg(s.sessionProfilePath.empty() ? LiveSessionView::tr(" and its merged profile") : QString())
        .arg(folder, errors.join(QLatin1Char('\n')));
}

} // namespace

void LiveSessionView::onFinished(const engine::SessionSummary &summary)
{
    m_status->setSummary(summary);
    m_health->setLostSamples(summary.lost, summary.samples);
    m_health->setCpuSamples(summary.incomplete, summary.samples);
    if (summary.health)
        showHealth(summary.health); // the final flush's, even when it was too short to be shown
    const bool crashed = summary.targetExited && summary.exitStatus > 128;
    showMessage(endText(summary, sessionDirectory()), crashed || !summary.saveErrors.empty());
    updateButtons();
    Q_EMIT sessionEnded();
}

void LiveSessionView::onFailed(const QString &message)
{
    showMessage(tr("The session could not go on: %1").arg(message), true);
    updateButtons();
    Q_EMIT sessionEnded();
}

void LiveSessionView::showMessage(const QString &text, bool problem)
{
    m_message->setText(text);
    m_message->setStyleSheet(problem ? QStringLiteral("QLabel { background: #fde2e1; color: #3a1010; padding: 6px; }")
                                     : QStringLiteral("QLabel { background: #e3effc; color: #10243a; padding: 6px; }"));
    m_message->setVisible(true);
}

void LiveSessionView::updateButtons()
{
    using State = engine::ProfilingSession::State;
    const State state = m_session->state();
    const bool running = state == State::Running;
    m_stop->setEnabled(running);
    m_pause->setEnabled(running && !m_session->isPaused());
    m_resume->setEnabled(running && m_session->isPaused());
    // One of the two at a time: the toolbar keeps its room for a narrow window.
    m_pause->setVisible(!m_resume->isEnabled());
    m_resume->setVisible(m_resume->isEnabled());
    const bool ended = state == State::Finished || state == State::Failed;
    m_save->setEnabled(ended && QFileInfo(sessionDirectory()).isDir());
    m_openProfile->setEnabled(ended &&
                              QFileInfo::exists(QDir(sessionDirectory()).filePath(QStringLiteral("profile.pprof"))));
    QString text;
    switch (state) {
    case State::Idle:
        text = tr("Starting…");
        break;
    case State::Running:
        text = !m_session->hasStarted() ? tr("Starting…") : m_session->isPaused() ? tr("Paused") : tr("Recording");
        break;
    case State::Stopping:
        text = tr("Stopping…");
        break;
    case State::Finished:
        text = tr("Ended");
        break;
    case State::Failed:
        text = tr("Failed");
        break;
    }
    m_status->setStateText(text);
    Q_EMIT titleChanged();
}

QString LiveSessionView::saveSessionTo(const QString &directory) const
{
    const QDir source(sessionDirectory());
    const QString targetPath = QDir(directory).filePath(source.dirName());
    if (!QDir().mkpath(targetPath))
        return tr("Cannot create %1").arg(targetPath);
    const QDir target(targetPath);
    for (const QFileInfo &file : source.entryInfoList(QDir::Files)) {
        const QString destination = target.filePath(file.fileName());
        QFile::remove(destination);
        if (!QFile::copy(file.absoluteFilePath(), destination))
            return tr("Cannot copy %1 to %2").arg(file.absoluteFilePath(), destination);
    }
    return {};
}

void LiveSessionView::chooseSaveDirectory()
{
    const QString directory = QFileDialog::getExistingDirectory(this, tr("Save Session To"), QDir::homePath());
    if (directory.isEmpty())
        return;
    const QString error = saveSessionTo(directory);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Save Session"), error);
    else
        showMessage(tr("Session saved in %1.").arg(QDir(directory).filePath(QDir(sessionDirectory()).dirName())),
                    false);
}

} // namespace emberline::ui
