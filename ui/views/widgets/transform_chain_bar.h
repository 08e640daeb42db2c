#pragma once

#include "engine/analysis/transforms.h"

#include <QWidget>

#include <vector>

class QHBoxLayout;
class QLabel;
class QToolButton;

namespace emberline::ui {

// The active transforms above the flame graph, in the order they apply: one chip per step ("focus 'main.work' ×");
// clicking a chip removes that step, "Clear" removes them all. Hidden while the chain is empty.
//
// Thread: GUI thread.
class TransformChainBar : public QWidget {
    Q_OBJECT
public:
    explicit TransformChainBar(QWidget *parent = nullptr);

    void setChain(const std::vector<engine::Transform> &chain);
    int chipCount() const { return static_cast<int>(m_chips.size()); }
    QToolButton *chip(int index) const { return m_chips[static_cast<size_t>(index)]; }

Q_SIGNALS:
    void removeRequested(int index);
    void clearRequested();

private:
    void setupUi();

    QHBoxLayout *m_chipLayout = nullptr;
    QToolButton *m_clear = nullptr;
    std::vector<QToolButton *> m_chips;
};

} // namespace emberline::ui
