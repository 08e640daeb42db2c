#pragma once

#include "engine/model/profile.h"

#include <QString>

namespace emberline::ui {

// The sample type the window opens a profile on: its default_sample_type when set; else CPU time when the
// profile has it (a recording made before Emberline set the default, or by a profiler that leaves it unset with
// wall time last); else pprof's rule, the last type. When that type has no value in any sample and another has
// (a memory recording of a program too short for a CPU sample), the first with values of CPU time, wall time,
// in-use and allocated bytes, else of any type. -1 for a profile without sample types.
int initialSampleType(const engine::Profile &profile);

// What a sample type measures, in a sentence for the sample-type selector's tooltip; "" for a type not known.
QString sampleTypeDescription(const QString &type);

} // namespace emberline::ui
