#pragma once

#include "engine/model/call_tree.h"
#include "engine/model/frame_table.h"
#include "engine/model/function_table.h"
#include "engine/model/profile.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/live/live_profile.h"
#include "ui/flamegraph/flame_graph_layout.h"

#include <QString>

#include <atomic>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// The call trees of one live session, one per sample type, each brought up to date by the next analysis instead
// of being rebuilt (the session's merged profile only grows, so its stack and frame ids stay valid).
//
// Thread: shared by the analyses of one session; the mutex lets one of them at a time update a tree.
struct LiveTrees {
    struct Tree {
        engine::CallTreeUpdater updater;
        // The snapshot's flush count when the updater last took the whole session's values unfiltered; from
        // there the stacks later flushes changed are all it needs to read. kNoIndex after any other update.
        uint32_t wholeSessionAt = engine::kNoIndex;
    };
    std::mutex mutex;
    std::map<int, Tree> bySampleType;
};

// A profile as the viewer holds it once loaded: the model plus what every view of it shares (frames, threads,
// totals). Built on the loading worker; immutable afterwards.
struct LoadedProfile {
    QString path;   // a file, or a session folder
    QString notice; // what the user should know about how it was read (a folder merged from its flushes)
    std::shared_ptr<const engine::Profile> profile;
    std::shared_ptr<const engine::FrameTable> frames;
    std::shared_ptr<const engine::ThreadIndex> threads; // empty index when samples carry no thread labels
    std::vector<int64_t> totals;                        // per sample type, over the samples shown
    // Per sample, the share of its value shown (a live session's time range over its aggregated profile);
    // null when every sample counts in full.
    std::shared_ptr<const std::vector<float>> sampleWeights;
    // Its samples are sums of many (a live session's aggregated profile): the sample count means little.
    bool aggregated = false;
    // The frame table's names for the flame graph (FlameGraphLayout::frameNames), built once per frame table.
    std::shared_ptr<const std::vector<QString>> frameNames;
    // A live session's call trees, kept up to date from one refresh to the next, and the snapshot `profile`
    // belongs to (its values per stack and its timeline); null for a file.
    std::shared_ptr<LiveTrees> liveTrees;
    std::shared_ptr<const engine::LiveSnapshot> live;
};

// Sum of one sample type per interned stack, each sample scaled by its weight; samples the mask drops and
// samples of weight 0 count nothing.
std::vector<int64_t> weightedValuesPerStack(const engine::Profile &profile, int sampleType,
                                            const std::vector<uint8_t> &mask, const std::vector<float> &weights,
                                            const std::atomic<bool> *cancel);
// Totals per sample type with weights.
std::vector<int64_t> weightedTotals(const engine::Profile &profile, const std::vector<float> &weights);

// The outcome of a load: a profile, or an error message naming the file, or cancelled.
struct LoadOutcome {
    std::shared_ptr<const LoadedProfile> loaded;
    QString error;
    bool cancelled = false;
};

// Reads a pprof file or a session folder (merging its flushes when its profile.pprof is missing or broken) and
// derives the shared tables. Runs on a worker.
LoadOutcome loadProfile(const QString &path, const engine::PprofReadOptions &options);

// What one view of a loaded profile asks for: a sample type and a sample filter (threads).
struct AnalysisRequest {
    std::shared_ptr<const LoadedProfile> loaded;
    int sampleType = 0;
    engine::SampleFilter filter;
};

// Everything derived for one request; immutable, shared with the GUI thread.
struct Analysis {
    std::shared_ptr<const LoadedProfile> loaded; // what it was derived from
    int sampleType = 0;
    std::string unit;
    engine::SampleFilter filter;
    size_t keptSamples = 0;
    std::shared_ptr<const std::vector<int64_t>> perStack;
    std::shared_ptr<const engine::CallTree> tree;
    std::shared_ptr<const engine::FunctionTable> functions;
};

// valuesPerStack, CallTree::build and FunctionTable::build for a request (a live session's tree is updated
// instead). Runs on a worker; returns null when cancelled.
std::shared_ptr<const Analysis> analyze(const AnalysisRequest &request, const std::atomic<bool> *cancel);

} // namespace emberline::ui
