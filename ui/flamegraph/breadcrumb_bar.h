#pragma once

#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

class QHBoxLayout;

namespace emberline::ui {

// The path from the root to the zoomed frame of a flame graph, as a row of buttons: clicking one zooms back to
// that ancestor. Long paths keep the root and the last few frames, with the ones between in a "…" menu.
//
// Thread: GUI thread.
class BreadcrumbBar : public QWidget {
    Q_OBJECT
public:
    struct Crumb {
        uint32_t node = 0;
        QString name;
        bool operator==(const Crumb &) const = default;
    };
    explicit BreadcrumbBar(QWidget *parent = nullptr);

    void setPath(std::vector<Crumb> path);
    const std::vector<Crumb> &path() const { return m_path; }

Q_SIGNALS:
    void nodeActivated(uint32_t node);

private:
    void rebuild();
    void addCrumbButton(const Crumb &crumb, int index, bool current);
    void addSeparator();

    QHBoxLayout *m_layout = nullptr;
    std::vector<Crumb> m_path;
};

} // namespace emberline::ui
