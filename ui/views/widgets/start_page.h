#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace emberline::ui {

// What the window shows when no profile is open: Open…, Profile a Program… (the Profile Process dialog), "Try it
// on a demo program" (a live session of the bundled demo), the recent files, and a reminder that files can be
// dropped on the window.
//
// Thread: GUI thread.
class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget *parent = nullptr);
    void setRecentFiles(const QStringList &files);

Q_SIGNALS:
    void openRequested();
    void profileRequested();
    void demoRequested();
    void recentFileActivated(const QString &path);

private:
    void setupUi();
    void connectSignals();

    QPushButton *m_open = nullptr;
    QPushButton *m_profile = nullptr;
    QPushButton *m_demo = nullptr;
    QLabel *m_recentTitle = nullptr;
    QListWidget *m_recent = nullptr;
};

} // namespace emberline::ui
