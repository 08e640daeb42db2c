#include "ui/views/widgets/start_page.h"

#include "ui/jobs/profile_summaries.h"

#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

namespace emberline::ui {
namespace {

QString durationText(int64_t ns)
{
    if (ns <= 0)
        return {};
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 60)
        return StartPage::tr("%1 s").arg(s, 0, 'f', s < 10 ? 1 : 0);
    const qint64 whole = std::llround(s);
    if (whole < 3600)
        return StartPage::tr("%1 min %2 s").arg(whole / 60).arg(whole % 60);
    return StartPage::tr("%1 h %2 min").arg(whole / 3600).arg(whole % 3600 / 60);
}

} // namespace

StartPage::StartPage(QWidget *parent) : QWidget(parent)
{
    setupUi();
    connectSignals();
}

void StartPage::setupUi()
{
    setObjectName(QStringLiteral("startPage"));
    m_summaries = new ProfileSummaries(this);
    auto *title = new QLabel(tr("Emberline"), this);
    QFont titleFont = title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 2.2);
    titleFont.setBold(true);
    title->setFont(titleFont);
    auto *subtitle = new QLabel(tr("Profile a native program live, or open a profile to explore it as a flame "
                                   "graph and a table of top functions."),
                                this);
    subtitle->setWordWrap(true);

    m_recentTitle = new QLabel(tr("<b>Recent files and sessions</b> (a click opens one)"), this);
    m_recent = new QTreeWidget(this);
    m_recent->setObjectName(QStringLiteral("recentFilesList"));
    m_recent->setColumnCount(ColumnCount);
    m_recent->setHeaderLabels({tr("Name"), tr("Program"), tr("Recorded"), tr("Duration"), tr("Hottest function")});
    m_recent->setRootIsDecorated(false);
    m_recent->setUniformRowHeights(true);
    m_recent->setAllColumnsShowFocus(true);
    m_recent->setTextElideMode(Qt::ElideRight);
    m_recent->header()->setStretchLastSection(true);
    m_recent->header()->setSectionResizeMode(QHeaderView::Interactive);
    m_recent->setCursor(Qt::PointingHandCursor);

    auto *column = new QVBoxLayout;
    column->addWidget(title);
    column->addWidget(subtitle);
    column->addSpacing(12);
    column->addWidget(createGettingStarted());
    column->addSpacing(12);
    column->addWidget(m_recentTitle);
    column->addWidget(m_recent);

    auto *frame = new QWidget(this);
    frame->setMaximumWidth(1100);
    frame->setLayout(column);
    auto *row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(frame, 8);
    row->addStretch(1);
    auto *outer = new QVBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(row);
    outer->addStretch(2);
    setRecentFiles({});
}

QWidget *StartPage::createGettingStarted()
{
    auto *box = new QWidget(this);
    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(16);
    int row = 0;
    auto add = [&](QPushButton *&button, const char *name, const QString &text, const QString &what) {
        button = new QPushButton(text, box);
        button->setObjectName(QLatin1String(name));
        button->setMinimumHeight(32);
        auto *label = new QLabel(what, box);
        label->setWordWrap(true);
        label->setObjectName(QLatin1String(name) + QStringLiteral("Help"));
        grid->addWidget(button, row, 0);
        grid->addWidget(label, row, 1);
        ++row;
    };
    add(m_profile, "startProfileButton", tr("Profile a Program…"),
        tr("Launch a program, or attach to a running one, and watch its flame graph fill in live (Ctrl+R)."));
    add(m_demo, "startDemoButton", tr("Try the Demo"),
        tr("Profile the small program that comes with Emberline: three busy threads, a live flame graph within "
           "seconds."));
    add(m_open, "startOpenButton", tr("Open Profile…"),
        tr("A pprof file (Go, Node, Datadog, Emberline), a recording's folder, perf.data, perf script output or "
           "folded stacks (Ctrl+O). Files dropped on the window open too."));
    grid->setColumnStretch(1, 1);
    return box;
}

void StartPage::connectSignals()
{
    connect(m_open, &QPushButton::clicked, this, &StartPage::openRequested);
    connect(m_profile, &QPushButton::clicked, this, &StartPage::profileRequested);
    connect(m_demo, &QPushButton::clicked, this, &StartPage::demoRequested);
    // A single click opens, like a link; Enter (activation) does too.
    const auto open = [this](QTreeWidgetItem *item) {
        Q_EMIT recentFileActivated(item->data(NameColumn, Qt::UserRole).toString());
    };
    connect(m_recent, &QTreeWidget::itemClicked, this, open);
    connect(m_recent, &QTreeWidget::itemActivated, this, open);
    connect(m_summaries, &ProfileSummaries::summaryReady, this, &StartPage::showSummary);
}

bool StartPage::isReadingSummaries() const
{
    return m_summaries->isRunning();
}

void StartPage::setRecentFiles(const QStringList &files)
{
    m_recent->clear();
    for (const QString &path : files) {
        auto *item = new QTreeWidgetItem(m_recent);
        const QFileInfo info(path);
        // A session folder is named by its folder; its profile.pprof by the folder too, with the file's name.
        const QString name = info.fileName() == QLatin1String("profile.pprof")
                                 ? QStringLiteral("%1/%2").arg(info.dir().dirName(), info.fileName())
                                 : info.fileName();
        item->setText(NameColumn, name);
        item->setData(NameColumn, Qt::UserRole, path);
        item->setToolTip(NameColumn, QDir::toNativeSeparators(path));
        item->setText(ProgramColumn, tr("reading…"));
        item->setForeground(ProgramColumn, palette().brush(QPalette::PlaceholderText));
    }
    m_recentTitle->setVisible(!files.isEmpty());
    m_recent->setVisible(!files.isEmpty());
    fitRecentList();
    m_summaries->request(files);
}

void StartPage::showSummary(const ProfileSummary &summary)
{
    for (int i = 0; i < m_recent->topLevelItemCount(); ++i) {
        QTreeWidgetItem *item = m_recent->topLevelItem(i);
        if (item->data(NameColumn, Qt::UserRole).toString() != summary.path)
            continue;
        if (summary.session)
            item->setText(NameColumn, tr("%1 (session)").arg(QFileInfo(summary.path).fileName()));
        item->setForeground(ProgramColumn, palette().brush(QPalette::Text));
        item->setText(ProgramColumn, summary.program);
        item->setText(RecordedColumn, QLocale().toString(summary.recorded, QLocale::ShortFormat));
        item->setText(DurationColumn, durationText(summary.durationNs));
        if (!summary.error.isEmpty()) {
            item->setText(ProgramColumn, tr("cannot be read"));
            item->setForeground(ProgramColumn, palette().brush(QPalette::PlaceholderText));
            item->setToolTip(ProgramColumn, summary.error);
        } else if (!summary.topFunction.isEmpty()) {
            item->setText(TopFunctionColumn, tr("%1 (%2% of %3)")
                                                 .arg(summary.topFunction)
                                                 .arg(summary.topShare * 100, 0, 'f', 1)
                                                 .arg(summary.sampleType));
            item->setToolTip(TopFunctionColumn, item->text(TopFunctionColumn));
        }
    }
    for (int c = 0; c < TopFunctionColumn; ++c)
        m_recent->resizeColumnToContents(c);
}

void StartPage::fitRecentList()
{
    // As tall as its rows (the list holds at most RecentFiles::kMaxEntries): no empty table below them.
    const int rows = m_recent->topLevelItemCount();
    const int row = rows > 0 ? m_recent->sizeHintForRow(0) : fontMetrics().height();
    m_recent->setFixedHeight(m_recent->header()->sizeHint().height() + rows * row + 2 * m_recent->frameWidth() + 2);
}

} // namespace emberline::ui
