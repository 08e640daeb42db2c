// ProfileProcessDialog: starting the session and waiting for the engine's answer; remembered settings.
#include "ui/dialogs/profile_process_dialog.h"

#include "ui/dialogs/attach_page.h"
#include "ui/dialogs/launch_page.h"
#include "ui/upload/upload_settings_widget.h"
#include "ui/views/explorer/profile_explorer.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>

namespace emberline::ui {

void ProfileProcessDialog::start()
{
    if (m_pending)
        return;
    engine::SessionConfig config;
    const QString error = buildConfig(config);
    if (!error.isEmpty()) {
        showMessage(error);
        return;
    }
    if (const QString uploadError = resolveUpload(); !uploadError.isEmpty()) {
        showMessage(uploadError);
        return;
    }
    // View > Python Interpreter Frames on: the session keeps them (marked), for the views to show or hide.
    config.pythonInterpreterFrames = ProfileExplorer::interpreterFramesShownByDefault();
    m_message->setVisible(false);
    saveSettings(); // usable values are remembered, whether or not the engine then accepts them
    m_pending = new engine::ProfilingSession(std::move(config), this);
    connect(m_pending, &engine::ProfilingSession::started, this, &ProfileProcessDialog::onStarted);
    connect(m_pending, &engine::ProfilingSession::failed, this, &ProfileProcessDialog::onRefused);
    connect(m_pending, &engine::ProfilingSession::finished, this, &ProfileProcessDialog::onEndedEarly);
    setStarting(true);
    m_pending->start();
}

void ProfileProcessDialog::onStarted()
{
    engine::ProfilingSession *session = m_pending;
    m_pending = nullptr;
    disconnect(session, nullptr, this, nullptr);
    session->setParent(nullptr);
    setStarting(false);
    Q_EMIT sessionStarted(session);
    accept();
}

void ProfileProcessDialog::onRefused(const QString &message)
{
    discardPending();
    setStarting(false);
    QString hint;
    if (message.contains(QLatin1String("perf_event_paranoid")) || message.contains(QLatin1String("CAP_")))
        hint = tr(" Run Emberline as root, or lower /proc/sys/kernel/perf_event_paranoid.");
    showMessage(tr("Emberline could not start profiling: %1.%2").arg(message, hint));
}

void ProfileProcessDialog::onEndedEarly(const engine::SessionSummary &summary)
{
    // The target ended before the session reported that it runs (within a quarter of a second).
    discardPending();
    setStarting(false);
    showMessage(
        tr("The program ended before it could be sampled (%1).").arg(QString::fromStdString(summary.endReason)));
}

void ProfileProcessDialog::discardPending()
{
    if (!m_pending)
        return;
    engine::ProfilingSession *session = m_pending;
    m_pending = nullptr;
    disconnect(session, nullptr, this, nullptr);
    if (!session->isActive()) {
        session->deleteLater();
        return;
    }
    // Still starting: it goes away on its own once its thread has ended, so nobody waits for it here.
    session->setParent(nullptr);
    connect(session, &engine::ProfilingSession::finished, session, &QObject::deleteLater);
    connect(session, &engine::ProfilingSession::failed, session, &QObject::deleteLater);
    session->stop();
}

void ProfileProcessDialog::reject()
{
    discardPending();
    setStarting(false);
    QDialog::reject();
}

QString ProfileProcessDialog::resolveUpload()
{
    m_startedUpload.reset();
    if (!m_upload->isChecked())
        return {};
    if (!m_uploadSettings->isValid())
        return m_uploadSettings->validationMessage();
    auto resolved = m_uploadSettings->resolve();
    if (!resolved)
        return tr("Upload: %1").arg(QString::fromStdString(resolved.error().message));
    m_startedUpload = std::move(resolved).value();
    return {};
}

void ProfileProcessDialog::setStarting(bool starting)
{
    m_start->setText(starting ? tr("Starting…") : tr("&Start"));
    m_modes->setEnabled(!starting);
    m_upload->setEnabled(!starting);
    m_uploadSettings->setEnabled(!starting);
    updateStartButton();
}

void ProfileProcessDialog::updateStartButton()
{
    const bool uploadBlocks = m_upload->isChecked() && !m_uploadSettings->isValid();
    m_start->setEnabled(!m_pending && !uploadBlocks);
    m_start->setToolTip(
        uploadBlocks ? tr("Fix the upload settings first:\n%1").arg(m_uploadSettings->validationMessage()) : QString());
}

void ProfileProcessDialog::showMessage(const QString &text)
{
    m_message->setText(text);
    m_message->setVisible(true);
}

void ProfileProcessDialog::loadSettings()
{
    m_launch->loadSettings();
    m_attach->loadSettings();
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    setMode(settings.value(QStringLiteral("mode")).toString() == QLatin1String("attach") ? Mode::Attach : Mode::Launch);
    m_frequency->setValue(settings.value(QStringLiteral("frequency"), 99).toInt());
    m_flushPeriod->setValue(settings.value(QStringLiteral("flushPeriod"), 5).toInt());
    const int sampler = m_sampler->findData(settings.value(QStringLiteral("sampler"), QStringLiteral("auto")));
    m_sampler->setCurrentIndex(std::max(0, sampler));
    // Its own key since wall time became the default: "wallTime" held the old default (off) for everyone.
    m_wallTime->setChecked(settings.value(QStringLiteral("recordWallTime"), true).toBool());
    m_upload->setChecked(settings.value(QStringLiteral("upload"), false).toBool());
    settings.endGroup();
    m_uploadSettings->load(settings); // group "upload"; the API key stays in its own file
    updateStartButton();
}

void ProfileProcessDialog::saveSettings()
{
    m_launch->saveSettings();
    m_attach->saveSettings();
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    settings.setValue(QStringLiteral("mode"),
                      mode() == Mode::Attach ? QStringLiteral("attach") : QStringLiteral("launch"));
    settings.setValue(QStringLiteral("frequency"), m_frequency->value());
    settings.setValue(QStringLiteral("flushPeriod"), m_flushPeriod->value());
    settings.setValue(QStringLiteral("sampler"), m_sampler->currentData());
    settings.setValue(QStringLiteral("recordWallTime"), m_wallTime->isChecked());
    settings.setValue(QStringLiteral("upload"), m_upload->isChecked());
    settings.endGroup();
    if (m_upload->isChecked()) {
        // The typed API key goes to its owner-only file, never to QSettings.
        if (const engine::Status saved = m_uploadSettings->save(settings); !saved)
            showMessage(tr("The API key could not be saved: %1").arg(QString::fromStdString(saved.error().message)));
    }
}

} // namespace emberline::ui
