#pragma once

#include <QWidget>

class QProgressBar;

namespace emberline::ui {

// The page a tab shows while its profile (or its two profiles) load: what is loading, a progress bar and
// Cancel. The bar is busy until a fraction is known. Its children's object names are the same in every tab
// ("loadingLabel", "loadProgress", "loadCancelButton"); tests look them up below one view.
//
// Thread: GUI thread.
class LoadingPage : public QWidget {
    Q_OBJECT
public:
    explicit LoadingPage(const QString &text, QWidget *parent = nullptr);

    // Busy: no fraction is known (yet).
    void setBusy();
    // `fraction` in [0, 1] of the work done.
    void setFraction(double fraction);

Q_SIGNALS:
    void cancelClicked();

private:
    QProgressBar *m_progress = nullptr;
};

} // namespace emberline::ui
