#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSettings;

namespace emberline::ui {

// The memory switch of the Profile Process dialog's pages, with its sampling interval: for a launched program the
// agent is preloaded, for a running one it is loaded into the process (its allocations from then on). The
// checkbox is "memoryCheck", the interval "allocIntervalCombo", and for a launched program the switch that counts a
// CPython's objects at its own allocators "pythonAllocatorsCheck".
//
// Thread: GUI thread.
class MemoryOptions : public QWidget {
    Q_OBJECT
public:
    enum class Target { Launched, Running };
    explicit MemoryOptions(Target target, QWidget *parent = nullptr);

    bool memory() const;
    // Mean bytes between sampled allocations (1: every one).
    qulonglong allocInterval() const;
    // A launched CPython's objects counted at its own allocators (SessionConfig::pythonAllocators); false for a
    // running process, whose allocators cannot be replaced.
    bool pythonAllocators() const;
    // Under `prefix` ("" or "attach") in the settings group the caller opened.
    void load(const QSettings &settings, const QString &prefix);
    void save(QSettings &settings, const QString &prefix) const;

private:
    QCheckBox *m_memory = nullptr;
    QComboBox *m_allocInterval = nullptr;
    QCheckBox *m_pythonAllocators = nullptr; // launched programs only
};

} // namespace emberline::ui
