#include "ui/dialogs/profile_process_dialog.h"

#include "ui/dialogs/attach_page.h"
#include "ui/dialogs/launch_page.h"
#include "ui/upload/upload_settings_widget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

namespace emberline::ui {

ProfileProcessDialog::ProfileProcessDialog(QWidget *parent) : QDialog(parent)
{
    setupUi();
    connectSignals();
    loadSettings();
}

ProfileProcessDialog::~ProfileProcessDialog()
{
    discardPending();
}

void ProfileProcessDialog::setupUi()
{
    setObjectName(QStringLiteral("profileProcessDialog"));
    setWindowTitle(tr("Profile Process"));
    m_modes = new QTabWidget(this);
    m_modes->setObjectName(QStringLiteral("modeTabs"));
    m_launch = new LaunchPage(m_modes);
    m_attach = new AttachPage(m_modes);
    m_modes->addTab(m_launch, tr("&Launch a program"));
    m_modes->addTab(m_attach, tr("Attach to a &running process"));

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("dialogMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setStyleSheet(QStringLiteral("QLabel { color: #a1140b; }"));
    m_message->setVisible(false);
    m_start = new QPushButton(tr("&Start"), this);
    m_start->setObjectName(QStringLiteral("startButton"));
    m_start->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));

    auto *options = new QHBoxLayout;
    options->addWidget(createOptions(), 1);
    options->addWidget(createUpload(), 1);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_start);
    buttons->addWidget(m_cancel);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_modes, 1);
    layout->addLayout(options);
    layout->addWidget(m_message);
    layout->addLayout(buttons);
    resize(860, 640);
}

QGroupBox *ProfileProcessDialog::createOptions()
{
    auto *box = new QGroupBox(tr("Sampling"), this);
    m_frequency = new QSpinBox(box);
    m_frequency->setObjectName(QStringLiteral("frequencySpin"));
    m_frequency->setRange(1, 10000);
    m_frequency->setSuffix(tr(" Hz"));
    m_frequency->setToolTip(tr("Samples per second and thread on CPU; 99 is cheap, 999 shows short functions"));
    m_flushPeriod = new QSpinBox(box);
    m_flushPeriod->setObjectName(QStringLiteral("flushPeriodSpin"));
    m_flushPeriod->setRange(1, 60);
    m_flushPeriod->setSuffix(tr(" s"));
    m_flushPeriod->setToolTip(tr("How often the views refresh and a profile is written (1 to 60 s)"));
    m_sampler = new QComboBox(box);
    m_sampler->setObjectName(QStringLiteral("samplerCombo"));
    m_sampler->addItem(tr("Automatic"), QStringLiteral("auto"));
    m_sampler->addItem(tr("perf events"), QStringLiteral("perf"));
    m_sampler->addItem(tr("ptrace (no perf events needed)"), QStringLiteral("ptrace"));
    m_sampler->addItem(tr("In-process (Emberline's agent in the program; no perf events needed)"),
                       QStringLiteral("inprocess"));
    m_sampler->setToolTip(tr("Automatic: perf events where they are allowed; where they are not, the in-process "
                             "sampler (Emberline's agent preloaded into a program you launch, or loaded into a "
                             "running one), and ptrace where the agent cannot be loaded"));
    m_wallTime = new QCheckBox(tr("Record wall time (off-CPU)"), box);
    m_wallTime->setObjectName(QStringLiteral("wallTimeCheck"));
    m_wallTime->setChecked(true);
    m_wallTime->setToolTip(tr("Also sample at context switches: where threads wait (sleep, locks, I/O). On by "
                              "default, as Datadog's profilers record it; turn it off for CPU time only"));
    auto *form = new QFormLayout(box);
    form->addRow(tr("&Frequency:"), m_frequency);
    form->addRow(tr("F&lush every:"), m_flushPeriod);
    form->addRow(tr("Sa&mpler:"), m_sampler);
    form->addRow(m_wallTime);
    return box;
}

QGroupBox *ProfileProcessDialog::createUpload()
{
    auto *box = new QGroupBox(tr("Datadog"), this);
    box->setObjectName(QStringLiteral("uploadGroup"));
    m_upload = new QCheckBox(tr("Upload each flush to Datadog"), box);
    m_upload->setObjectName(QStringLiteral("uploadToggle"));
    m_upload->setToolTip(tr("Also send every flush to Datadog's profiler; the local copy is kept either way"));
    m_uploadSettings = new UploadSettingsWidget(box);
    m_uploadSettings->setVisible(false);
    auto *layout = new QVBoxLayout(box);
    layout->addWidget(m_upload);
    layout->addWidget(m_uploadSettings);
    layout->addStretch();
    return box;
}

void ProfileProcessDialog::connectSignals()
{
    connect(m_start, &QPushButton::clicked, this, &ProfileProcessDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, &ProfileProcessDialog::reject);
    connect(m_modes, &QTabWidget::currentChanged, this, [this] { m_message->setVisible(false); });
    connect(m_upload, &QCheckBox::toggled, this, [this](bool on) {
        m_uploadSettings->setVisible(on);
        updateStartButton();
    });
    connect(m_uploadSettings, &UploadSettingsWidget::changed, this, &ProfileProcessDialog::updateStartButton);
}

void ProfileProcessDialog::setMode(Mode mode)
{
    m_modes->setCurrentIndex(mode == Mode::Launch ? 0 : 1);
}

ProfileProcessDialog::Mode ProfileProcessDialog::mode() const
{
    return m_modes->currentIndex() == 0 ? Mode::Launch : Mode::Attach;
}

QString ProfileProcessDialog::message() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

QString ProfileProcessDialog::buildConfig(engine::SessionConfig &config) const
{
    QString error = mode() == Mode::Launch ? m_launch->fillConfig(config) : m_attach->fillConfig(config);
    if (!error.isEmpty())
        return error;
    config.frequency = m_frequency->value();
    config.flushPeriodNs = static_cast<int64_t>(m_flushPeriod->value()) * 1'000'000'000;
    config.sampler = m_sampler->currentData().toString().toStdString();
    config.wallTime = m_wallTime->isChecked();
    return {};
}

} // namespace emberline::ui
