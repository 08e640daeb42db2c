#include "ui/upload/upload_settings_widget.h"

#include "engine/upload/api_key_store.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>

namespace emberline::ui {
namespace {

std::optional<std::string> fieldValue(const QLineEdit *edit)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return std::nullopt;
    return text.toStdString();
}

QLineEdit *lineEdit(const char *name, const QString &placeholder, QWidget *parent)
{
    auto *edit = new QLineEdit(parent);
    edit->setObjectName(QLatin1String(name));
    edit->setPlaceholderText(placeholder);
    edit->setClearButtonEnabled(true);
    return edit;
}

} // namespace

UploadSettingsWidget::UploadSettingsWidget(QWidget *parent)
    : QWidget(parent), m_apiKeyPath(QString::fromStdString(engine::defaultApiKeyPath()))
{
    setupUi();
    connectSignals();
    validate();
}

void UploadSettingsWidget::setupUi()
{
    setObjectName(QStringLiteral("uploadSettings"));
    auto *form = new QFormLayout(this);
    m_agent = new QRadioButton(tr("Through the Datadog agent"), this);
    m_agent->setObjectName(QStringLiteral("uploadModeAgent"));
    m_agentless = new QRadioButton(tr("Agentless, straight to Datadog (HTTPS, needs an API key)"), this);
    m_agentless->setObjectName(QStringLiteral("uploadModeAgentless"));
    m_mode = new QButtonGroup(this);
    m_mode->addButton(m_agent);
    m_mode->addButton(m_agentless);
    m_agent->setChecked(true);
    form->addRow(tr("Send"), m_agent);
    form->addRow(QString(), m_agentless);

    m_agentUrl = lineEdit("uploadAgentUrl", tr("from DD_TRACE_AGENT_URL / DD_AGENT_HOST, else localhost:8126"), this);
    form->addRow(tr("Agent URL"), m_agentUrl);
    m_site = new QComboBox(this);
    m_site->setObjectName(QStringLiteral("uploadSite"));
    m_site->setEditable(true);
    m_site->addItems({QStringLiteral("datadoghq.com"), QStringLiteral("datadoghq.eu"),
                      QStringLiteral("us3.datadoghq.com"), QStringLiteral("us5.datadoghq.com"),
                      QStringLiteral("ap1.datadoghq.com"), QStringLiteral("ddog-gov.com")});
    form->addRow(tr("Site"), m_site);
    m_apiKey = lineEdit("uploadApiKey", tr("32 characters; saved readable by you only"), this);
    m_apiKey->setEchoMode(QLineEdit::Password);
    m_forgetKey = new QPushButton(tr("Forget saved key"), this);
    m_forgetKey->setObjectName(QStringLiteral("uploadForgetApiKey"));
    auto *keyRow = new QHBoxLayout;
    keyRow->addWidget(m_apiKey, 1);
    keyRow->addWidget(m_forgetKey);
    form->addRow(tr("API key"), keyRow);
    m_apiKeyState = new QLabel(this);
    m_apiKeyState->setObjectName(QStringLiteral("uploadApiKeyState"));
    form->addRow(QString(), m_apiKeyState);

    m_service = lineEdit("uploadService", tr("DD_SERVICE, else the program's name"), this);
    m_env = lineEdit("uploadEnv", tr("DD_ENV, else the agent's default"), this);
    m_version = lineEdit("uploadVersion", tr("DD_VERSION"), this);
    m_tags = lineEdit("uploadTags", tr("key:value, separated by commas (added to DD_TAGS)"), this);
    form->addRow(tr("Service"), m_service);
    form->addRow(tr("Env"), m_env);
    form->addRow(tr("Version"), m_version);
    form->addRow(tr("Tags"), m_tags);
    m_validation = new QLabel(this);
    m_validation->setObjectName(QStringLiteral("uploadValidation"));
    m_validation->setWordWrap(true);
    form->addRow(m_validation);
}

void UploadSettingsWidget::connectSignals()
{
    for (QLineEdit *edit : {m_agentUrl, m_apiKey, m_service, m_env, m_version, m_tags})
        connect(edit, &QLineEdit::textChanged, this, &UploadSettingsWidget::validate);
    connect(m_site, &QComboBox::currentTextChanged, this, &UploadSettingsWidget::validate);
    connect(m_agentless, &QRadioButton::toggled, this, &UploadSettingsWidget::validate);
    connect(m_forgetKey, &QPushButton::clicked, this, [this] {
        (void)engine::removeApiKeyFile(m_apiKeyPath.toStdString());
        m_apiKey->clear();
        validate();
    });
}

void UploadSettingsWidget::setApiKeyPath(const QString &path)
{
    m_apiKeyPath = path;
    validate();
}

bool UploadSettingsWidget::hasSavedKey() const
{
    return QFileInfo::exists(m_apiKeyPath);
}

void UploadSettingsWidget::updateKeyState()
{
    const bool agentless = m_agentless->isChecked();
    m_agentUrl->setEnabled(!agentless);
    m_site->setEnabled(agentless);
    m_apiKey->setEnabled(agentless);
    m_forgetKey->setEnabled(hasSavedKey());
    if (!m_apiKey->text().isEmpty())
        m_apiKeyState->setText(tr("A new key will be saved to %1 (mode 0600).").arg(m_apiKeyPath));
    else if (hasSavedKey())
        m_apiKeyState->setText(tr("A key is saved in %1.").arg(m_apiKeyPath));
    else
        m_apiKeyState->setText(tr("No key saved; DD_API_KEY is used when set."));
}

engine::UploadOverrides UploadSettingsWidget::overrides() const
{
    engine::UploadOverrides o;
    o.mode = m_agentless->isChecked() ? engine::UploadMode::Agentless : engine::UploadMode::Agent;
    o.agentUrl = fieldValue(m_agentUrl);
    if (m_agentless->isChecked()) {
        const QString site = m_site->currentText().trimmed();
        if (!site.isEmpty())
            o.site = site.toStdString();
        o.apiKey = fieldValue(m_apiKey);
    }
    o.service = fieldValue(m_service);
    o.env = fieldValue(m_env);
    o.version = fieldValue(m_version);
    o.tags = fieldValue(m_tags);
    return o;
}

engine::Result<engine::UploadSettings> UploadSettingsWidget::resolve(const engine::EnvLookup &env) const
{
    engine::UploadOverrides o = overrides();
    if (o.mode == engine::UploadMode::Agentless && !o.apiKey && !env("DD_API_KEY") && hasSavedKey()) {
        auto key = engine::readApiKeyFile(m_apiKeyPath.toStdString());
        if (!key)
            return key.error();
        o.apiKey = key.value();
    }
    return engine::resolveUploadSettings(env, o);
}

void UploadSettingsWidget::validate()
{
    updateKeyState();
    m_problems.clear();
    auto settings = resolve();
    if (!settings) {
        const std::string &message = settings.error().message;
        const bool noKeyYet = m_agentless->isChecked() && m_apiKey->text().isEmpty() && !hasSavedKey() &&
                              message.find("needs an API key") != std::string::npos;
        m_problems << (noKeyYet ? tr("Enter the API key, or set DD_API_KEY.") : QString::fromStdString(message));
    }
    m_validation->setText(m_problems.isEmpty() ? tr("Settings are valid.") : m_problems.join(QLatin1Char('\n')));
    m_validation->setStyleSheet(m_problems.isEmpty() ? QString() : QStringLiteral("color: #b00020;"));
    Q_EMIT changed();
}

void UploadSettingsWidget::load(QSettings &settings)
{
    settings.beginGroup(QStringLiteral("upload"));
    const bool agentless = settings.value(QStringLiteral("mode")).toString() == QLatin1String("agentless");
    (agentless ? m_agentless : m_agent)->setChecked(true);
    m_agentUrl->setText(settings.value(QStringLiteral("agentUrl")).toString());
    m_site->setCurrentText(settings.value(QStringLiteral("site"), QStringLiteral("datadoghq.com")).toString());
    m_service->setText(settings.value(QStringLiteral("service")).toString());
    m_env->setText(settings.value(QStringLiteral("env")).toString());
    m_version->setText(settings.value(QStringLiteral("version")).toString());
    m_tags->setText(settings.value(QStringLiteral("tags")).toString());
    settings.endGroup();
    m_apiKey->clear();
    validate();
}

engine::Status UploadSettingsWidget::save(QSettings &settings)
{
    settings.beginGroup(QStringLiteral("upload"));
    settings.setValue(QStringLiteral("mode"),
                      m_agentless->isChecked() ? QStringLiteral("agentless") : QStringLiteral("agent"));
    settings.setValue(QStringLiteral("agentUrl"), m_agentUrl->text().trimmed());
    settings.setValue(QStringLiteral("site"), m_site->currentText().trimmed());
    settings.setValue(QStringLiteral("service"), m_service->text().trimmed());
    settings.setValue(QStringLiteral("env"), m_env->text().trimmed());
    settings.setValue(QStringLiteral("version"), m_version->text().trimmed());
    settings.setValue(QStringLiteral("tags"), m_tags->text().trimmed());
    settings.endGroup();
    const std::string key = m_apiKey->text().trimmed().toStdString();
    if (key.empty())
        return engine::Ok{};
    if (auto st = engine::validateApiKey(key); !st)
        return st;
    if (auto st = engine::writeApiKeyFile(m_apiKeyPath.toStdString(), key); !st)
        return st;
    m_apiKey->clear();
    validate();
    return engine::Ok{};
}

} // namespace emberline::ui
