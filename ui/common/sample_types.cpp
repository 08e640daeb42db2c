#include "ui/common/sample_types.h"

#include <QCoreApplication>

namespace emberline::ui {

int initialSampleType(const engine::Profile &profile)
{
    if (profile.defaultSampleType != 0)
        return profile.defaultSampleTypeIndex();
    if (const int cpu = profile.sampleTypeIndex("cpu-time"); cpu >= 0)
        return cpu;
    return profile.defaultSampleTypeIndex();
}

QString sampleTypeDescription(const QString &type)
{
    struct Known {
        const char *type;
        const char *text;
    };
    static constexpr Known kKnown[] = {
        {"cpu-time", QT_TRANSLATE_NOOP("SampleTypes", "CPU time: the time a thread spent running on a CPU")},
        {"cpu", QT_TRANSLATE_NOOP("SampleTypes", "CPU time: the time a thread spent running on a CPU")},
        {"cpu-samples",
         QT_TRANSLATE_NOOP("SampleTypes", "CPU samples: how many times a thread was found running on a CPU")},
        {"samples", QT_TRANSLATE_NOOP("SampleTypes", "Samples: how many times a stack was sampled")},
        {"wall-time",
         QT_TRANSLATE_NOOP("SampleTypes", "Wall time: the time that passed, per thread, running on a CPU and also "
                                          "while waiting (sleep, locks, I/O)")},
        {"alloc-samples",
         QT_TRANSLATE_NOOP("SampleTypes", "Allocations: how many blocks were allocated (estimated from samples)")},
        {"alloc-space", QT_TRANSLATE_NOOP("SampleTypes", "Allocated memory: the bytes allocated, freed or not")},
        {"alloc_objects", QT_TRANSLATE_NOOP("SampleTypes", "Allocations: how many blocks were allocated")},
        {"alloc_space", QT_TRANSLATE_NOOP("SampleTypes", "Allocated memory: the bytes allocated, freed or not")},
        {"inuse-objects", QT_TRANSLATE_NOOP("SampleTypes", "In use: the blocks still allocated (not yet freed)")},
        {"inuse-space", QT_TRANSLATE_NOOP("SampleTypes", "In use: the bytes still allocated (not yet freed)")},
        {"inuse_objects", QT_TRANSLATE_NOOP("SampleTypes", "In use: the blocks still allocated (not yet freed)")},
        {"inuse_space", QT_TRANSLATE_NOOP("SampleTypes", "In use: the bytes still allocated (not yet freed)")},
    };
    for (const Known &k : kKnown) {
        if (type == QLatin1String(k.type))
            return QCoreApplication::translate("SampleTypes", k.text);
    }
    return {};
}

} // namespace emberline::ui
