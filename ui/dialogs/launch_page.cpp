#include "ui/dialogs/launch_page.h"
#include "ui/dialogs/memory_options.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>

namespace emberline::ui {
LaunchPage::LaunchPage(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void LaunchPage::setupUi()
{
    setObjectName(QStringLiteral("launchPage"));
    m_program = new QLineEdit(this);
    m_program->setObjectName(QStringLiteral("programEdit"));
    m_program->setPlaceholderText(tr("Path to the program, or a command found in PATH"));
    m_browseProgram = new QToolButton(this);
    m_browseProgram->setObjectName(QStringLiteral("browseProgramButton"));
    m_browseProgram->setText(tr("Browse…"));
    m_arguments = new QLineEdit(this);
    m_arguments->setObjectName(QStringLiteral("argumentsEdit"));
    m_arguments->setPlaceholderText(tr("Arguments, quoted as in a shell"));
    m_workingDirectory = new QLineEdit(this);
    m_workingDirectory->setObjectName(QStringLiteral("workingDirectoryEdit"));
    m_workingDirectory->setPlaceholderText(tr("Default: Emberline's current directory"));
    m_browseDirectory = new QToolButton(this);
    m_browseDirectory->setObjectName(QStringLiteral("browseWorkingDirectoryButton"));
    m_browseDirectory->setText(tr("Browse…"));
    m_environment = new QPlainTextEdit(this);
    m_environment->setObjectName(QStringLiteral("environmentEdit"));
    m_environment->setPlaceholderText(tr("NAME=value, one per line (added to Emberline's environment)"));
    m_environment->setMaximumHeight(90);
    m_memory = new MemoryOptions(MemoryOptions::Target::Launched, this);

    auto *programRow = new QHBoxLayout;
    programRow->addWidget(m_program, 1);
    programRow->addWidget(m_browseProgram);
    auto *directoryRow = new QHBoxLayout;
    directoryRow->addWidget(m_workingDirectory, 1);
    directoryRow->addWidget(m_browseDirectory);
    auto *form = new QFormLayout(this);
    form->addRow(tr("&Program:"), programRow);
    form->addRow(tr("&Arguments:"), m_arguments);
    form->addRow(tr("&Working directory:"), directoryRow);
    form->addRow(tr("&Environment:"), m_environment);
    form->addRow(tr("Memory:"), m_memory);
}

void LaunchPage::connectSignals()
{
    connect(m_browseProgram, &QToolButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Program to Profile"), m_program->text());
        if (!file.isEmpty())
            m_program->setText(file);
    });
    connect(m_browseDirectory, &QToolButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Working Directory"), m_workingDirectory->text());
        if (!dir.isEmpty())
            m_workingDirectory->setText(dir);
    });
}

void LaunchPage::setProgram(const QString &program)
{
    m_program->setText(program);
}

QString LaunchPage::fillConfig(engine::SessionConfig &config) const
{
    const QString program = m_program->text().trimmed();
    if (program.isEmpty())
        return tr("Choose a program to launch.");
    QString resolved = program;
    if (!program.contains(QLatin1Char('/')))
        resolved = QStandardPaths::findExecutable(program);
    const QFileInfo info(resolved);
    if (resolved.isEmpty() || !info.exists())
        return tr("There is no program \"%1\" (neither a file nor a command in PATH).").arg(program);
    if (!info.isFile() || !info.isExecutable())
        return tr("\"%1\" is not an executable file.").arg(resolved);
    const QString directory = m_workingDirectory->text().trimmed();
    if (!directory.isEmpty() && !QFileInfo(directory).isDir())
        return tr("The working directory \"%1\" does not exist.").arg(directory);

    static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    std::vector<std::pair<std::string, std::string>> environment;
    for (const QString &line : m_environment->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        const QString key = line.left(eq).trimmed();
        if (eq <= 0 || !name.match(key).hasMatch())
            return tr("The environment line \"%1\" is not NAME=value.").arg(line);
        environment.emplace_back(key.toStdString(), line.mid(eq + 1).toStdString());
    }
    config.command = {info.absoluteFilePath().toStdString()};
    for (const QString &arg : QProcess::splitCommand(m_arguments->text()))
        config.command.push_back(arg.toStdString());
    config.workingDirectory = directory.toStdString();
    config.environment = std::move(environment);
    config.pid = 0;
    config.memory = m_memory->memory();
    config.allocInterval = m_memory->allocInterval();
    config.pythonAllocators = config.memory && m_memory->pythonAllocators();
    return {};
}

void LaunchPage::loadSettings()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    m_program->setText(settings.value(QStringLiteral("program")).toString());
    m_arguments->setText(settings.value(QStringLiteral("arguments")).toString());
    m_workingDirectory->setText(settings.value(QStringLiteral("workingDirectory")).toString());
    m_environment->setPlainText(settings.value(QStringLiteral("environment")).toString());
    m_memory->load(settings, {});
}

void LaunchPage::saveSettings() const
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("profileDialog"));
    settings.setValue(QStringLiteral("program"), m_program->text());
    settings.setValue(QStringLiteral("arguments"), m_arguments->text());
    settings.setValue(QStringLiteral("workingDirectory"), m_workingDirectory->text());
    settings.setValue(QStringLiteral("environment"), m_environment->toPlainText());
    m_memory->save(settings, {});
}

} // namespace emberline::ui
