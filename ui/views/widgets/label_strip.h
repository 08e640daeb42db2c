#pragma once

#include <QWidget>

class QLabel;

namespace emberline::ui {

// A one-line label for text that changes often (a live status line). The label sits in a strip of fixed height
// without a layout, which gives it the strip's whole width: when its text changes, only the strip is told, and
// the window is not laid out again (a label placed in a layout asks for that on every change of text).
// The text is elided on the right when the strip is too narrow; the full text is the tooltip.
//
// Thread: GUI thread.
class LabelStrip : public QWidget {
    Q_OBJECT
public:
    explicit LabelStrip(const QString &labelName, QWidget *parent = nullptr);

    void setText(const QString &text);
    QString text() const { return m_text; }
    QLabel *label() const { return m_label; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void showText();

    QLabel *m_label = nullptr;
    QString m_text;
};

} // namespace emberline::ui
