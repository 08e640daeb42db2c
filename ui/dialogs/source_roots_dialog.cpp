#include "ui/dialogs/source_roots_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace emberline::ui {

SourceRootsDialog::SourceRootsDialog(const QStringList &folders, QWidget *parent) : QDialog(parent)
{
    setupUi();
    connectSignals();
    for (const QString &folder : folders)
        addFolder(folder);
}

void SourceRootsDialog::setupUi()
{
    setObjectName(QStringLiteral("sourceRootsDialog"));
    setWindowTitle(tr("Source Roots"));
    auto *help = new QLabel(tr("Source files are looked up at the path recorded in the profile, then under each "
                               "of these folders, with the recorded path's leading folders dropped one by one."),
                            this);
    help->setWordWrap(true);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("sourceRootsList"));
    m_add = new QPushButton(tr("Add…"), this);
    m_add->setObjectName(QStringLiteral("addSourceRootButton"));
    m_remove = new QPushButton(tr("Remove"), this);
    m_remove->setObjectName(QStringLiteral("removeSourceRootButton"));
    auto *box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(box, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *buttons = new QVBoxLayout;
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    auto *row = new QHBoxLayout;
    row->addWidget(m_list, 1);
    row->addLayout(buttons);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(help);
    layout->addLayout(row, 1);
    layout->addWidget(box);
    resize(560, 320);
}

void SourceRootsDialog::connectSignals()
{
    connect(m_add, &QPushButton::clicked, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Add a Source Root"));
        if (!folder.isEmpty())
            addFolder(folder);
    });
    connect(m_remove, &QPushButton::clicked, this, [this] { delete m_list->currentItem(); });
}

void SourceRootsDialog::addFolder(const QString &folder)
{
    if (folder.isEmpty() || !m_list->findItems(folder, Qt::MatchExactly).isEmpty())
        return;
    m_list->addItem(folder);
}

QStringList SourceRootsDialog::folders() const
{
    QStringList result;
    for (int i = 0; i < m_list->count(); ++i)
        result << m_list->item(i)->text();
    return result;
}

} // namespace emberline::ui
