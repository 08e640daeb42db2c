#pragma once

#include "engine/session/profiling_session.h"
#include "engine/upload/upload_settings.h"

#include <QDialog>

#include <optional>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace emberline::ui {

class AttachPage;
class LaunchPage;
class UploadSettingsWidget;

// The "Profile Process" dialog (Ctrl+R, and on the start page): launch a program (with or without its memory) or
// attach to a running process, with the sampling options (frequency, flush period, sampler, wall time) and the
// upload toggle. Values that can
// be checked here (an empty program, a pid that vanished) are refused with a message and never reach the
// engine. Start creates the ProfilingSession and waits for it to run: if the engine refuses (an attach it may not
// do, a sampler this build lacks) the dialog shows the engine's explanation and stays open; once the session
// runs it hands it over through sessionStarted() and closes. The last settings are remembered (QSettings).
// With the upload toggle on, the upload settings are shown and checked as they are typed (Start waits for them
// to be valid); Start resolves them, and whoever receives the session reads them from uploadSettings().
//
// Thread: GUI thread.
class ProfileProcessDialog : public QDialog {
    Q_OBJECT
public:
    enum class Mode { Launch, Attach };

    explicit ProfileProcessDialog(QWidget *parent = nullptr);
    ~ProfileProcessDialog() override;

    void setMode(Mode mode);
    Mode mode() const;
    LaunchPage *launchPage() const { return m_launch; }
    AttachPage *attachPage() const { return m_attach; }
    QString message() const;
    bool isStarting() const { return m_pending != nullptr; }
    // The configuration the dialog would start, or an error message for the user.
    QString buildConfig(engine::SessionConfig &config) const;
    UploadSettingsWidget *uploadSettingsWidget() const { return m_uploadSettings; }
    // The upload settings of the session last started; nullopt when it was started without upload.
    const std::optional<engine::UploadSettings> &uploadSettings() const { return m_startedUpload; }

Q_SIGNALS:
    // The session runs; the receiver takes ownership.
    void sessionStarted(emberline::engine::ProfilingSession *session);

public Q_SLOTS:
    void start();
    void reject() override;

private:
    void setupUi();
    void connectSignals();
    QGroupBox *createOptions();
    QGroupBox *createUpload();
    void loadSettings();
    void saveSettings();
    void showMessage(const QString &text);
    void setStarting(bool starting);
    void updateStartButton();
    QString resolveUpload();
    void onStarted();
    void onRefused(const QString &message);
    void onEndedEarly(const engine::SessionSummary &summary);
    void discardPending();

    QTabWidget *m_modes = nullptr;
    LaunchPage *m_launch = nullptr;
    AttachPage *m_attach = nullptr;
    QSpinBox *m_frequency = nullptr;
    QSpinBox *m_flushPeriod = nullptr;
    QComboBox *m_sampler = nullptr;
    QCheckBox *m_wallTime = nullptr;
    QCheckBox *m_upload = nullptr;
    UploadSettingsWidget *m_uploadSettings = nullptr;
    std::optional<engine::UploadSettings> m_startedUpload;
    QLabel *m_message = nullptr;
    QPushButton *m_start = nullptr;
    QPushButton *m_cancel = nullptr;
    engine::ProfilingSession *m_pending = nullptr;
};

} // namespace emberline::ui
