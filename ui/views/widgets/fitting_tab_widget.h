#pragma once

#include <QTabWidget>

class QAction;
class QToolButton;

namespace emberline::ui {

// A tab widget whose tab bar never scrolls: when the tabs' labels do not fit beside the corner button, each tab shows
// its short label and the corner button its action's symbol alone (the text's first word: "⤢" for "⤢ Maximize"); when
// even those do not fit, the labels are elided. Every tab's tooltip is its full label. So a window at 2× scale, 800
// pixels wide, shows every detail tab at once instead of two and a pair of scroll arrows, and one at 1× keeps the full
// labels.
//
// Thread: GUI thread.
class FittingTabWidget : public QTabWidget {
    Q_OBJECT
public:
    explicit FittingTabWidget(QWidget *parent = nullptr);

    using QTabWidget::addTab;
    // A tab with its label and the shorter one shown when the labels do not fit.
    int addTab(QWidget *page, const QString &label, const QString &shortLabel);
    // The top right corner: a button for `action` (its text, or its first word when the tabs need the room).
    void setCornerAction(QAction *action, const QString &objectName);
    QToolButton *cornerButton() const { return m_corner; }
    // The short labels are shown.
    bool isCompact() const { return m_compact; }

protected:
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void tabInserted(int index) override;
    void tabRemoved(int index) override;

private:
    class Bar;
    void fitLabels();
    void showLabels(bool compact);
    QString cornerText(bool compact) const;
    int cornerWidth(bool compact) const;

    Bar *m_bar = nullptr;
    QToolButton *m_corner = nullptr;
    bool m_compact = false;
    bool m_fitting = false;
};

} // namespace emberline::ui
