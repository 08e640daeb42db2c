#pragma once

#include "engine/common/result.h"
#include "engine/upload/upload_settings.h"

#include <QWidget>

class QButtonGroup;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSettings;

namespace emberline::ui {

// Upload settings: agent (URL, empty for Datadog's environment rules) or agentless (site and API key),
// service, env, version and tags, each checked as it is typed with a message that says what is wrong.
// Non-secret fields persist in QSettings (group "upload"); the API key is masked, never put in QSettings or a
// log, and saved only to an owner-only file (engine/upload/api_key_store.h), the one `emberline record` reads.
//
// Thread: GUI thread.
class UploadSettingsWidget : public QWidget {
    Q_OBJECT
public:
    explicit UploadSettingsWidget(QWidget *parent = nullptr);

    void setApiKeyPath(const QString &path); // default: engine::defaultApiKeyPath()
    QString apiKeyPath() const { return m_apiKeyPath; }
    void load(QSettings &settings);
    // Saves the non-secret fields, and the typed API key (if any) to the key file. Error: the key file failed.
    engine::Status save(QSettings &settings);

    // The explicit choices of the form; the saved key is read from its file only when agentless.
    engine::UploadOverrides overrides() const;
    // The settings an upload would use: the environment, overridden by the form.
    engine::Result<engine::UploadSettings> resolve(const engine::EnvLookup &env = engine::processEnvironment()) const;
    bool isValid() const { return m_problems.isEmpty(); }
    QString validationMessage() const { return m_problems.join(QLatin1Char('\n')); }

Q_SIGNALS:
    void changed();

private:
    void setupUi();
    void connectSignals();
    void validate();
    void updateKeyState();
    bool hasSavedKey() const;

    QString m_apiKeyPath;
    QStringList m_problems;
    QRadioButton *m_agent = nullptr;
    QRadioButton *m_agentless = nullptr;
    QButtonGroup *m_mode = nullptr;
    QLineEdit *m_agentUrl = nullptr;
    QComboBox *m_site = nullptr;
    QLineEdit *m_apiKey = nullptr;
    QLabel *m_apiKeyState = nullptr;
    QPushButton *m_forgetKey = nullptr;
    QLineEdit *m_service = nullptr;
    QLineEdit *m_env = nullptr;
    QLineEdit *m_version = nullptr;
    QLineEdit *m_tags = nullptr;
    QLabel *m_validation = nullptr;
};

} // namespace emberline::ui
