#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"
#include "engine/model/session_ids.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// Merges profiles of the same sample types (type and unit, in the same order) into one: identical functions,
// mappings and locations are shared, samples are appended with their labels, and the time span covers all
// inputs. Used to build a session's whole profile from its flushes and to open several files as one.
Result<Profile> mergeProfiles(std::span<const Profile *const> profiles);

// Merges profiles one at a time into a growing result. With `aggregate`, samples with the same stack and
// labels (after dropping the `dropLabels` keys) are summed into one sample, so a long session's merged
// profile grows with its distinct stacks, not with its sample count.
//
// Thread: one owner at a time.
class ProfileMerger {
public:
    struct Options {
        bool aggregate = false;
        std::vector<std::string> dropLabels;
        // Locations with the same function (and inlined functions) in the same mapping become one location
        // without address or line numbers, so stacks differ only where their functions do. A live session's
        // views show functions: a busy leaf function hit at hundreds of addresses would otherwise multiply
        // the distinct stacks (and the memory and time every refresh takes) by as much.
        bool locationsByFunction = false;
        // The values of snapshot sample types (isSnapshotSampleType: the memory live at a flush's end) are those of
        // the latest profile added: each add() first sets them to 0 on the samples the add() before gave them to,
        // so that a session's flushes, each a full snapshot, are not summed. Aggregated, a sample holds the latest
        // snapshot's value; appended, only the latest profile's samples hold theirs.
        bool latestSnapshots = false;
    };
    ProfileMerger();
    explicit ProfileMerger(Options options);
    ~ProfileMerger();
    // A deep copy that goes on merging independently (a live session's second buffer).
    ProfileMerger(const ProfileMerger &other);
    ProfileMerger &operator=(const ProfileMerger &) = delete;
    // When `destinationSamples` is given, it receives for each of `profile`'s samples the index of the result's
    // sample that took its values (a live session's timeline refers to samples of the aggregated profile).
    Status add(const Profile &profile, std::vector<uint32_t> *destinationSamples = nullptr);
    // The same, for a flush of a live session whose recorder ids are known: a location or stack met before is
    // found by its id, and the strings, functions and mappings of the profile are taken only for what is new.
    // The result holds the samples, stacks and names that add() without ids gives (its tables may be in another
    // order, and leave out the profile's unused mappings and functions). `ids` must describe `profile` (one
    // entry per location and per sample; checked) and come from one session.
    Status add(const Profile &profile, const SessionIds &ids, std::vector<uint32_t> *destinationSamples = nullptr);
    // What a profile's ids became in the result.
    struct Remap {
        std::vector<StringId> strings;   // per source string
        std::vector<uint32_t> locations; // per source location
    };
    // Takes `profile`'s tables, comments and time span into the result but none of its samples; `remap` tells
    // where its strings and locations went. A writer that streams samples out (the session's profile.pprof)
    // keeps only the tables this way.
    Status addTables(const Profile &profile, Remap &remap);
    // The same with session ids, as add() takes them: `remap.strings` holds the strings of the profile's labels
    // and comments and those its new locations use (kNoIndex for the others).
    Status addTables(const Profile &profile, const SessionIds &ids, Remap &remap);
    const Profile &result() const;
    // Moves the result out (no copy of a large merge); the merger is spent.
    Profile takeResult();
    size_t added() const;

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace emberline::engine
