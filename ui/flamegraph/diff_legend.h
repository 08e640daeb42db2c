#pragma once

#include <QWidget>

namespace emberline::ui {

// The key to a differential flame graph's colours: a strip from blue (shrank) through grey (unchanged) to red
// (grew), drawn with the same diffColor() as the frames, with its ends and middle labelled.
//
// Thread: GUI thread.
class DiffLegend : public QWidget {
    Q_OBJECT
public:
    explicit DiffLegend(QWidget *parent = nullptr);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
};

} // namespace emberline::ui
