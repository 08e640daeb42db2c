#pragma once

#include <QWidget>

class QLabel;

namespace emberline::ui {

// The page a tab shows when its profile (or one of its two profiles) could not be loaded: a bold title, the
// error (plain text, selectable, wrapped) and Retry and Close. Its children's object names are the same in
// every tab ("errorLabel", "retryButton", "closeTabButton"); tests look them up below one view.
//
// Thread: GUI thread.
class LoadErrorPage : public QWidget {
    Q_OBJECT
public:
    explicit LoadErrorPage(const QString &title, QWidget *parent = nullptr);

    void setMessage(const QString &message);
    QString message() const;

Q_SIGNALS:
    void retryClicked();
    void closeClicked();

private:
    QLabel *m_message = nullptr;
};

} // namespace emberline::ui
