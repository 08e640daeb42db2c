#pragma once

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace emberline::ui {

// File > Compare…: chooses the base and the new profile, each a .pprof file or a session folder. OK is enabled
// once both exist; a missing path is named under the fields.
//
// Thread: GUI thread.
class CompareDialog : public QDialog {
    Q_OBJECT
public:
    explicit CompareDialog(QWidget *parent = nullptr);

    QString basePath() const;
    QString newPath() const;
    void setBasePath(const QString &path);
    void setNewPath(const QString &path);

private:
    void setupUi();
    void connectSignals();
    QWidget *createRow(QLineEdit *&edit, QToolButton *&file, QToolButton *&folder, const QString &name);
    void browseFile(QLineEdit *edit);
    void browseFolder(QLineEdit *edit);
    void validate();

    QLineEdit *m_base = nullptr;
    QLineEdit *m_new = nullptr;
    QToolButton *m_baseFile = nullptr;
    QToolButton *m_baseFolder = nullptr;
    QToolButton *m_newFile = nullptr;
    QToolButton *m_newFolder = nullptr;
    QLabel *m_problem = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace emberline::ui
