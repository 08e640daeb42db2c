#pragma once

#include "engine/model/chunked_column.h"
#include "engine/model/interned_rows.h"
#include "engine/model/stack_table.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

using StringId = uint32_t; // index into Profile::strings(); 0 is always ""
inline constexpr uint32_t kNoIndex = UINT32_MAX;

struct ValueType {
    StringId type = 0;
    StringId unit = 0;
};

struct Function {
    uint64_t id = 0;
    StringId name = 0;
    StringId systemName = 0;
    StringId filename = 0;
    int64_t startLine = 0;
};

// One source line of a location. Lines of a location run from the inlined callee outwards to its caller.
struct Line {
    uint32_t functionIndex = kNoIndex; // index into Profile::functions()
    int64_t line = 0;
    int64_t column = 0;
};

struct Location {
    uint64_t id = 0;
    uint32_t mappingIndex = kNoIndex; // index into Profile::mappings(), or kNoIndex
    uint64_t address = 0;
    std::vector<Line> lines;
    bool isFolded = false;
};

struct Mapping {
    uint64_t id = 0;
    uint64_t start = 0;
    uint64_t limit = 0;
    uint64_t offset = 0;
    StringId filename = 0;
    StringId buildId = 0;
    bool hasFunctions = false;
    bool hasFilenames = false;
    bool hasLineNumbers = false;
    bool hasInlineFrames = false;
};

struct Label {
    StringId key = 0;
    StringId str = 0; // 0 when the label is numeric
    int64_t num = 0;
    StringId numUnit = 0;
    friend bool operator==(const Label &, const Label &) = default;
};

// A read-only view of one sample; spans point into the owning Profile.
struct SampleView {
    std::span<const uint32_t> locations; // location indices, leaf first
    std::span<const int64_t> values;     // parallel to Profile::sampleTypes()
    std::span<const Label> labels;
    uint32_t stackId = 0;
};

// The pprof data model, in memory. Strings live in one table and are referred to by id, exactly as in
// profile.proto; ids from the file (location, function, mapping ids) are resolved to vector indices once,
// when the profile is built, so derived structures never hash ids. Samples are stored column-wise with their
// stacks interned in a StackTable, so a million samples of depth 32 cost a few bytes each beyond their unique
// stacks.
//
// Copying a profile shares its sample columns' chunks (ChunkedColumn), so a copy costs its tables and stacks, and
// the copy and the original pay only for the chunks either one changes afterwards.
//
// Thread: a Profile is built on one thread and is immutable afterwards; it crosses threads only as
// std::shared_ptr<const Profile>. A copy may be taken and changed on one thread while others read the original.
class Profile {
public:
    Profile();

    // --- strings
    const std::vector<std::string> &strings() const { return m_strings; }
    const std::string &str(StringId id) const { return id < m_strings.size() ? m_strings[id] : m_strings[0]; }
    StringId intern(std::string_view s);
    // Appends a string without de-duplication (the reader's path: the file's table is taken as is).
    StringId appendString(std::string s);

    // --- tables
    std::vector<ValueType> &sampleTypes() { return m_sampleTypes; }
    const std::vector<ValueType> &sampleTypes() const { return m_sampleTypes; }
    std::vector<Function> &functions() { return m_functions; }
    const std::vector<Function> &functions() const { return m_functions; }
    std::vector<Location> &locations() { return m_locations; }
    const std::vector<Location> &locations() const { return m_locations; }
    std::vector<Mapping> &mappings() { return m_mappings; }
    const std::vector<Mapping> &mappings() const { return m_mappings; }
    std::vector<StringId> &comments() { return m_comments; }
    const std::vector<StringId> &comments() const { return m_comments; }

    // --- samples
    size_t sampleCount() const { return m_sampleStacks.rows(); }
    SampleView sample(size_t i) const;
    uint32_t sampleStackId(size_t i) const { return m_sampleStacks[i]; }
    std::span<const int64_t> sampleValues(size_t i) const;
    std::span<const Label> sampleLabels(size_t i) const;
    const StackTable &stacks() const { return m_stacks; }
    // Adds a sample; `locations` are location indices, leaf first. values.size() must equal sampleTypes().size().
    void addSample(std::span<const uint32_t> locations, std::span<const int64_t> values,
                   std::span<const Label> labels = {});
    void addSampleWithStack(uint32_t stackId, std::span<const int64_t> values, std::span<const Label> labels = {});
    // Each distinct set of labels is kept once; its id stands for it (equal sets, equal ids, in this profile).
    uint32_t internLabelSet(std::span<const Label> labels) { return m_labelSets.intern(labels); }
    uint32_t sampleLabelSetId(size_t i) const { return m_sampleLabels[i]; }
    void addSampleWithIds(uint32_t stackId, std::span<const int64_t> values, uint32_t labelSetId);
    uint32_t internStack(std::span<const uint32_t> locations) { return m_stacks.intern(locations); }
    // Adds `values` to sample i's values (aggregation of identical samples).
    void addToSampleValues(size_t i, std::span<const int64_t> values);
    // Sets one value of sample i (a snapshot type's value, replaced by a newer snapshot's).
    void setSampleValue(size_t i, size_t type, int64_t value);
    void reserveSamples(size_t n);
    // Room for `stacks` interned stacks (memory is only reserved, not touched).
    void reserveStacks(size_t stacks);
    // Heap held by the samples' columns (stacks, values, labels), counting chunks shared with copies in full.
    size_t sampleMemoryBytes() const;
    // A profile with this one's strings (same ids), tables and scalars and no samples: what a transform of the
    // samples starts from.
    Profile withoutSamples() const;

    // --- scalars
    int64_t timeNanos = 0;
    int64_t durationNanos = 0;
    ValueType periodType;
    int64_t period = 0;
    StringId dropFrames = 0;
    StringId keepFrames = 0;
    StringId defaultSampleType = 0;

    // --- derived helpers
    // The sample type shown by default: default_sample_type if set and present, else the last one (pprof's rule).
    int defaultSampleTypeIndex() const;
    int sampleTypeIndex(std::string_view type) const; // -1 if absent
    std::vector<int64_t> totals() const;              // sum of each sample type over all samples
    // Label lookups by key name; returns kNoIndex-equivalent (false) when absent.
    StringId findString(std::string_view s) const;

private:
    friend class PprofDecoder; // fills the columns directly while streaming

    std::vector<std::string> m_strings;
    // Built lazily by intern(). Its keys view this profile's own strings, so a copy starts without one (a
    // copied index would view the source's strings); a move keeps it (the strings stay where they are).
    struct StringIndex {
        std::unordered_map<std::string_view, StringId> map;
        bool built = false;
        StringIndex() = default;
        StringIndex(const StringIndex &) {}
        StringIndex(StringIndex &&) noexcept = default;
        StringIndex &operator=(const StringIndex &)
        {
            map.clear();
            built = false;
            return *this;
        }
        StringIndex &operator=(StringIndex &&) noexcept = default;
    };
    StringIndex m_stringIndex;

    std::vector<ValueType> m_sampleTypes;
    std::vector<Function> m_functions;
    std::vector<Location> m_locations;
    std::vector<Mapping> m_mappings;
    std::vector<StringId> m_comments;

    StackTable m_stacks;
    // Every distinct set of labels, once: the samples of a program's thread share theirs (thread id, name and
    // state), so a sample costs 4 bytes of labels instead of 24 a label.
    struct HashLabels {
        uint64_t operator()(std::span<const Label> labels) const;
    };
    InternedRows<Label, HashLabels> m_labelSets;
    // Per sample, in chunks that copies share until one of them writes (a live session's snapshots): the stack
    // id, the values (one row of sampleTypes().size()) and the label set.
    ChunkedColumn<uint32_t> m_sampleStacks;
    ChunkedColumn<int64_t> m_values;
    ChunkedColumn<uint32_t> m_sampleLabels;
};

} // namespace emberline::engine
