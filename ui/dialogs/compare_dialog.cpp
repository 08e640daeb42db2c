#include "ui/dialogs/compare_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace emberline::ui {

CompareDialog::CompareDialog(QWidget *parent) : QDialog(parent)
{
    setupUi();
    connectSignals();
}

QWidget *CompareDialog::createRow(QLineEdit *&edit, QToolButton *&file, QToolButton *&folder, const QString &name)
{
    auto *row = new QWidget(this);
    edit = new QLineEdit(row);
    edit->setObjectName(name + QStringLiteral("PathEdit"));
    edit->setMinimumWidth(420);
    edit->setPlaceholderText(tr("A .pprof file or a session folder"));
    file = new QToolButton(row);
    file->setObjectName(name + QStringLiteral("FileButton"));
    file->setText(tr("File…"));
    folder = new QToolButton(row);
    folder->setObjectName(name + QStringLiteral("FolderButton"));
    folder->setText(tr("Session folder…"));
    auto *layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    layout->addWidget(file);
    layout->addWidget(folder);
    return row;
}

void CompareDialog::setupUi()
{
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare Profiles"));
    auto *form = new QFormLayout;
    form->addRow(tr("&Base (before):"), createRow(m_base, m_baseFile, m_baseFolder, QStringLiteral("base")));
    form->addRow(tr("&New (after):"), createRow(m_new, m_newFile, m_newFolder, QStringLiteral("new")));
    auto *explain = new QLabel(tr("The flame graph's widths come from the new profile; red frames grew since the "
                                  "base, blue frames shrank."),
                               this);
    explain->setWordWrap(true);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("compareProblemLabel"));
    m_problem->setStyleSheet(QStringLiteral("color: #a02018;"));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->setObjectName(QStringLiteral("compareButtons"));
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Compare"));
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(explain);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    validate();
}

void CompareDialog::connectSignals()
{
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_base, &QLineEdit::textChanged, this, &CompareDialog::validate);
    connect(m_new, &QLineEdit::textChanged, this, &CompareDialog::validate);
    connect(m_baseFile, &QToolButton::clicked, this, [this] { browseFile(m_base); });
    connect(m_newFile, &QToolButton::clicked, this, [this] { browseFile(m_new); });
    connect(m_baseFolder, &QToolButton::clicked, this, [this] { browseFolder(m_base); });
    connect(m_newFolder, &QToolButton::clicked, this, [this] { browseFolder(m_new); });
}

QString CompareDialog::basePath() const
{
    return m_base->text().trimmed();
}

QString CompareDialog::newPath() const
{
    return m_new->text().trimmed();
}

void CompareDialog::setBasePath(const QString &path)
{
    m_base->setText(path);
}

void CompareDialog::setNewPath(const QString &path)
{
    m_new->setText(path);
}

void CompareDialog::browseFile(QLineEdit *edit)
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Choose a Profile"), edit->text(),
                                                      tr("Profiles (*.pprof *.pb.gz *.pb *.prof);;All files (*)"));
    if (!path.isEmpty())
        edit->setText(path);
}

void CompareDialog::browseFolder(QLineEdit *edit)
{
    const QString path = QFileDialog::getExistingDirectory(this, tr("Choose a Session Folder"), edit->text());
    if (!path.isEmpty())
        edit->setText(path);
}

void CompareDialog::validate()
{
    QStringList problems;
    for (const auto &[label, path] : {std::pair(tr("Base"), basePath()), std::pair(tr("New"), newPath())}) {
        if (!path.isEmpty() && !QFileInfo::exists(path))
            problems << tr("%1: %2 does not exist").arg(label, path);
    }
    m_problem->setText(problems.join(QLatin1Char('\n')));
    m_problem->setVisible(!problems.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)
        ->setEnabled(problems.isEmpty() && !basePath().isEmpty() && !newPath().isEmpty());
}

} // namespace emberline::ui
