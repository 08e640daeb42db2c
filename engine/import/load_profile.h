#pragma once

#include "engine/analysis/analysis.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/session_folder.h"

#include <QString>

#include <memory>

namespace emberline::engine {

// The outcome of a load: a profile, or an error message naming the file, or cancelled.
struct LoadOutcome {
    std::shared_ptr<const LoadedProfile> loaded;
    QString error;
    bool cancelled = false;
};

// Reads a pprof file or a session folder (merging its flushes when its profile.pprof is missing or broken, or,
// with SessionTimes::Wanted, for their timestamps: see readSessionFolder) and derives the tables every view
// shares. Runs on a worker.
LoadOutcome loadProfile(const QString &path, const PprofReadOptions &options,
                        SessionTimes times = SessionTimes::Wanted);

} // namespace emberline::engine
