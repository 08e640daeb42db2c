#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;

namespace emberline::ui {

// What the window shows when no profile is open: Open…, the recent files, and a reminder that files can be
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
    void recentFileActivated(const QString &path);

private:
    void setupUi();
    void connectSignals();

    QPushButton *m_open = nullptr;
    QLabel *m_recentTitle = nullptr;
    QListWidget *m_recent = nullptr;
};

} // namespace emberline::ui
