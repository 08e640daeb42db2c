#pragma once

#include <QDialog>

class QListWidget;
class QPushButton;

namespace emberline::ui {

// View > Source Roots…: the folders to look for source files under when they are not at their recorded paths
// (a binary built on another machine or in a container). Add opens a folder chooser; OK stores the list.
//
// Thread: GUI thread.
class SourceRootsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SourceRootsDialog(const QStringList &folders, QWidget *parent = nullptr);

    QStringList folders() const;
    // Adds a folder as the Add button does once a folder is chosen (tests call it directly).
    void addFolder(const QString &folder);

private:
    void setupUi();
    void connectSignals();

    QListWidget *m_list = nullptr;
    QPushButton *m_add = nullptr;
    QPushButton *m_remove = nullptr;
};

} // namespace emberline::ui
