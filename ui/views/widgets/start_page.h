#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace emberline::ui {

class ProfileSummaries;
struct ProfileSummary;

// What the window shows when no profile is open: the three ways in (Open…, Profile a Program…, the demo), each
// with a line saying what it does, and the recent files and session folders with what they are (when recorded,
// for how long, of which program, their hottest function), read in the background (ProfileSummaries); a click
// on one opens it.
//
// Thread: GUI thread.
class StartPage : public QWidget {
    Q_OBJECT
public:
    enum Column { NameColumn, ProgramColumn, RecordedColumn, DurationColumn, TopFunctionColumn, ColumnCount };

    explicit StartPage(QWidget *parent = nullptr);
    void setRecentFiles(const QStringList &files);
    QTreeWidget *recentList() const { return m_recent; }
    // The summaries of the recent files are still being read.
    bool isReadingSummaries() const;

Q_SIGNALS:
    void openRequested();
    void profileRequested();
    void demoRequested();
    void recentFileActivated(const QString &path);

private:
    void setupUi();
    QWidget *createGettingStarted();
    void connectSignals();
    void showSummary(const ProfileSummary &summary);
    void fitRecentList();

    QPushButton *m_open = nullptr;
    QPushButton *m_profile = nullptr;
    QPushButton *m_demo = nullptr;
    QLabel *m_recentTitle = nullptr;
    QTreeWidget *m_recent = nullptr;
    ProfileSummaries *m_summaries = nullptr;
};

} // namespace emberline::ui
