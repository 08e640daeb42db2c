#pragma once

#include "engine/session/record_session.h"

#include <QWidget>

class QLineEdit;
class QPlainTextEdit;
class QToolButton;

namespace emberline::ui {

class MemoryOptions;

// The "Launch" page of the Profile Process dialog: the program (with a file chooser), its arguments (split like a
// shell would, quotes respected), the working directory and added environment variables (NAME=value, one a
// line), and the memory switch with its sampling interval (memory profiling preloads an agent into the program).
// fillConfig() checks what it can before anything reaches the engine.
//
// Thread: GUI thread.
class LaunchPage : public QWidget {
    Q_OBJECT
public:
    explicit LaunchPage(QWidget *parent = nullptr);

    // Fills the launch part of `config`; returns an error message for the user, or "" when the values are usable.
    QString fillConfig(engine::SessionConfig &config) const;
    void setProgram(const QString &program);
    void loadSettings();
    void saveSettings() const;

private:
    void setupUi();
    void connectSignals();

    QLineEdit *m_program = nullptr;
    QToolButton *m_browseProgram = nullptr;
    QLineEdit *m_arguments = nullptr;
    QLineEdit *m_workingDirectory = nullptr;
    QToolButton *m_browseDirectory = nullptr;
    QPlainTextEdit *m_environment = nullptr;
    MemoryOptions *m_memory = nullptr;
};

} // namespace emberline::ui
