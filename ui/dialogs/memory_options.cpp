#include "ui/dialogs/memory_options.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QSettings>

namespace emberline::ui {
namespace {

constexpr qulonglong kDefaultAllocInterval =
    qulonglong{512} * 1024; // SessionConfig's default: cheap enough to leave on

QString key(const QString &prefix, const char *name)
{
    const QString n = QString::fromLatin1(name);
    return prefix.isEmpty() ? n : prefix + n.left(1).toUpper() + n.mid(1);
}

} // namespace

MemoryOptions::MemoryOptions(Target target, QWidget *parent) : QWidget(parent)
{
    m_memory = new QCheckBox(tr("Profile &memory (allocations, live heap, leaks)"), this);
    m_memory->setObjectName(QStringLiteral("memoryCheck"));
    m_memory->setToolTip(target == Target::Launched
                             ? tr("Preload Emberline's allocation agent into the program: where memory is allocated, "
                                  "what stays live, and what is never freed")
                             : tr("Load Emberline's allocation agent into the running process (one of its threads "
                                  "stops for some milliseconds): what it allocates from then on, where, what stays "
                                  "live. Its modules are put back as they were when the session ends."));
    m_allocInterval = new QComboBox(this);
    m_allocInterval->setObjectName(QStringLiteral("allocIntervalCombo"));
    m_allocInterval->setToolTip(tr("How many bytes are allocated, on average, between two sampled allocations: "
                                   "larger is cheaper, smaller sees rarer allocations"));
    for (const qulonglong kib : {64, 128, 256, 512, 1024, 4096})
        m_allocInterval->addItem(kib < 1024 ? tr("every %1 KiB").arg(kib) : tr("every %1 MiB").arg(kib / 1024),
                                 kib * 1024);
    m_allocInterval->addItem(tr("every allocation (exact, slower)"), qulonglong{1});
    m_allocInterval->setCurrentIndex(m_allocInterval->findData(kDefaultAllocInterval));
    m_allocInterval->setEnabled(false);
    connect(m_memory, &QCheckBox::toggled, m_allocInterval, &QWidget::setEnabled);
    if (target == Target::Launched) {
        m_pythonAllocators = new QCheckBox(tr("Python objects"), this);
        m_pythonAllocators->setObjectName(QStringLiteral("pythonAllocatorsCheck"));
        m_pythonAllocators->setToolTip(
            tr("For a CPython program: count every object at CPython's own allocators, with the Python code that "
               "allocated it. Off, its small objects count by the arenas CPython maps for them (one allocation "
               "each)."));
        m_pythonAllocators->setEnabled(false);
        connect(m_memory, &QCheckBox::toggled, m_pythonAllocators, &QWidget::setEnabled);
    }

    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed); // one row: a form's extra height goes elsewhere
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_memory);
    row->addWidget(m_allocInterval);
    if (m_pythonAllocators)
        row->addWidget(m_pythonAllocators);
    row->addStretch();
}

bool MemoryOptions::memory() const
{
    return m_memory->isChecked();
}

qulonglong MemoryOptions::allocInterval() const
{
    return m_allocInterval->currentData().toULongLong();
}

bool MemoryOptions::pythonAllocators() const
{
    return m_pythonAllocators && m_pythonAllocators->isChecked();
}

void MemoryOptions::load(const QSettings &settings, const QString &prefix)
{
    m_memory->setChecked(settings.value(key(prefix, "memory"), false).toBool());
    // Read as a number: a settings file gives it back as text, which findData() would not match.
    const qulonglong bytes = settings.value(key(prefix, "allocInterval"), kDefaultAllocInterval).toULongLong();
    const int interval = m_allocInterval->findData(bytes);
    m_allocInterval->setCurrentIndex(interval >= 0 ? interval : m_allocInterval->findData(kDefaultAllocInterval));
    if (m_pythonAllocators)
        m_pythonAllocators->setChecked(settings.value(key(prefix, "pythonAllocators"), false).toBool());
}

void MemoryOptions::save(QSettings &settings, const QString &prefix) const
{
    settings.setValue(key(prefix, "memory"), m_memory->isChecked());
    settings.setValue(key(prefix, "allocInterval"), m_allocInterval->currentData());
    if (m_pythonAllocators)
        settings.setValue(key(prefix, "pythonAllocators"), m_pythonAllocators->isChecked());
}

} // namespace emberline::ui
