#pragma once

#include "engine/analysis/call_tree.h"
#include "engine/analysis/function_table.h"
#include "engine/analysis/transforms.h"
#include "engine/live/live_snapshot.h"
#include "engine/model/frame_table.h"
#include "engine/model/profile.h"
#include "engine/model/sample_filter.h"
#include "engine/model/sample_overlay.h"

#include <QString>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace emberline::engine {

// The call trees of one live session, one per sample type, each brought up to date by the next analysis instead
// of being rebuilt (the session's merged profile only grows, so its stack and frame ids stay valid).
//
// Thread: shared by the analyses of one session; the mutex lets one of them at a time update a tree.
struct LiveTrees {
    struct Tree {
        CallTreeUpdater updater;
        // The snapshot's flush count when the updater last took the whole session's values unfiltered; from
        // there the stacks later flushes changed are all it needs to read. kNoIndex after any other update.
        uint32_t wholeSessionAt = kNoIndex;
    };
    std::mutex mutex;
    std::map<int, Tree> bySampleType;
};

// A profile as the views hold it once loaded: the model plus what every view of it shares (frames, threads,
// totals). Built on a worker (the loader, or a live session's stage); immutable afterwards. The names are QString
// already, because this is where the engine hands a profile to the window.
struct LoadedProfile {
    QString path;   // a file, or a session folder
    QString notice; // what the user should know about how it was read (a folder merged from its flushes)
    std::shared_ptr<const Profile> profile;
    std::shared_ptr<const FrameTable> frames;
    std::shared_ptr<const ThreadIndex> threads; // empty index when samples carry no thread labels
    std::vector<int64_t> totals;                // per sample type, over the samples shown
    // Per sample, the share of its value shown (a live session's time range over its aggregated profile);
    // null when every sample counts in full.
    std::shared_ptr<const std::vector<float>> sampleWeights;
    // For the sample types it gives (a live session's memory types over a time range), the values shown instead of
    // the profile's and the weights' (null: none).
    std::shared_ptr<const SampleOverlay> sampleOverlay;
    // Some of its frames are the Python interpreter's own, kept by the recording (isInterpreterFunction): the views
    // hide them unless asked to show them (Transform::Kind::HideInterpreter).
    bool interpreterFrames = false;
    // Its samples are sums of many (a live session's aggregated profile): the sample count means little.
    bool aggregated = false;
    // The frame table's names for the flame graph (frameDisplayNames), built once per frame table.
    std::shared_ptr<const std::vector<QString>> frameNames;
    // A live session's call trees, kept up to date from one refresh to the next, and the snapshot `profile`
    // belongs to (its values per stack and its timeline); null for a file.
    std::shared_ptr<LiveTrees> liveTrees;
    std::shared_ptr<const LiveSnapshot> live;
    // The profile this one was derived from by a view's transforms or inversion (deriveProfile); null for a
    // profile as it was loaded.
    std::shared_ptr<const LoadedProfile> original;
    // The transforms that made this profile from `original`, when that is all that did (not inverted).
    std::vector<Transform> transformedBy;
};

// A profile already in memory (`emberline report --base`, a test) as a LoadedProfile: its frames, threads and
// totals. frameNames stays null (they are for drawing; a comparison makes its own).
std::shared_ptr<const LoadedProfile> makeLoadedProfile(Profile profile, QString path = {});

// Sum of one sample type per interned stack, each sample scaled by its weight; samples the mask drops and
// samples of weight 0 count nothing.
std::vector<int64_t> weightedValuesPerStack(const Profile &profile, int sampleType, const std::vector<uint8_t> &mask,
                                            const std::vector<float> &weights, const std::atomic<bool> *cancel);
// Totals per sample type with weights.
std::vector<int64_t> weightedTotals(const Profile &profile, const std::vector<float> &weights);
// Sum of one sample type per interned stack as `loaded` shows it: from its overlay for a type that gives, else
// weighted by its sample weights when it has some, else plain (valuesPerStack).
std::vector<int64_t> shownValuesPerStack(const LoadedProfile &loaded, int sampleType, const std::vector<uint8_t> &mask,
                                         const std::atomic<bool> *cancel);

// Each sample's value of one type as `loaded` shows it (shownValuesPerStack's values, sample by sample): `visit(sample,
// value)` for every sample with a value that is not 0.
void forEachShownValue(const LoadedProfile &loaded, int sampleType,
                       const std::function<void(uint32_t sample, int64_t value)> &visit,
                       const std::atomic<bool> *cancel);

struct Analysis;

// What one view of a loaded profile asks for: a sample type and a sample filter (threads).
struct AnalysisRequest {
    std::shared_ptr<const LoadedProfile> loaded;
    int sampleType = 0;
    SampleFilter filter;
    // An analysis of `loaded->original` for the same sample type and filter, when one is at hand: the call tree of a
    // transformed profile is then made from its tree (transformCallTree), a pass over its nodes, instead of a walk
    // of every transformed stack. Ignored when it does not fit (another sample type or filter, time-range weights,
    // a chain the tree cannot follow exactly).
    std::shared_ptr<const Analysis> untransformed;
};

// Everything derived for one request; immutable, shared with the GUI thread.
struct Analysis {
    std::shared_ptr<const LoadedProfile> loaded; // what it was derived from
    int sampleType = 0;
    std::string unit;
    SampleFilter filter;
    size_t keptSamples = 0;
    std::shared_ptr<const std::vector<int64_t>> perStack;
    std::shared_ptr<const CallTree> tree;
    std::shared_ptr<const FunctionTable> functions;
};

// valuesPerStack, CallTree::build and FunctionTable::build for a request (a live session's tree is updated
// instead). The window's views and a live session's stage both call it. Runs on a worker; returns null when
// cancelled.
std::shared_ptr<const Analysis> analyze(const AnalysisRequest &request, const std::atomic<bool> *cancel);

} // namespace emberline::engine
