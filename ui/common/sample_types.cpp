#include "ui/common/sample_types.h"

#include <QCoreApplication>

namespace emberline::ui {

namespace {

// Whether any sample has a value of the type (stops at the first: the usual answer is found at once).
bool hasValues(const engine::Profile &profile, int type)
{
    for (size_t i = 0; i < profile.sampleCount(); ++i)
        if (profile.sampleValues(i)[static_cast<size_t>(type)] != 0)
            return true;
    return false;
}

} // namespace

int initialSampleType(const engine::Profile &profile)
{
    int type = profile.defaultSampleTypeIndex();
    if (profile.defaultSampleType == 0)
        if (const int cpu = profile.sampleTypeIndex("cpu-time"); cpu >= 0)
            type = cpu;
    if (type < 0 || profile.sampleCount() == 0 || hasValues(profile, type))
        return type;
    // A view of nothing where another type has values (a memory recording of a program too short for a CPU sample):
    // the first of these that has any, else the first type that has.
    for (const char *name : {"cpu-time", "wall-time", "inuse-space", "alloc-space"})
        if (const int other = profile.sampleTypeIndex(name); other >= 0 && hasValues(profile, other))
            return other;
    for (int other = 0; other < static_cast<int>(profile.sampleTypes().size()); ++other)
        if (hasValues(profile, other))
            return other;
    return type;
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
