#pragma once

#include "engine/model/profile.h"

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// Builds a Profile from frames known by name (what text formats carry): one function per (name, file), one
// location per (function, module, address), one mapping per module. Samples with the same stack and thread
// are added up, so a million lines of text make a profile the size of its distinct stacks.
//
// Thread: owned by the importing thread.
class TextProfileBuilder {
public:
    struct SampleType {
        std::string type;
        std::string unit;
    };
    explicit TextProfileBuilder(const std::vector<SampleType> &types);

    // A location index for a frame; `module` (a file path) and `address` may be empty and 0.
    uint32_t location(std::string_view name, std::string_view module = {}, uint64_t address = 0);
    // `stack` holds location indices, leaf first. `tid` 0 and an empty thread name add no thread labels.
    void addSample(const std::vector<uint32_t> &stack, const std::vector<int64_t> &values, int64_t tid = 0,
                   std::string_view threadName = {});
    size_t samplesAdded() const { return m_samplesAdded; }
    // Adds what `later` built, as if its frames and samples had come to this builder after this one's own: the
    // profile is the one a single builder fed both inputs in turn makes (the same tables and samples in the same
    // order, the same string ids), so that parts of a file built apart join into what reading it whole makes.
    void append(const TextProfileBuilder &later);
    Profile take() { return std::move(m_profile); }

private:
    uint32_t mapping(std::string_view module);
    void aggregate(const std::vector<uint32_t> &stack, std::span<const int64_t> values, int64_t tid,
                   std::string_view threadName);

    Profile m_profile;
    std::unordered_map<std::string, uint32_t> m_functions;
    std::unordered_map<std::string, uint32_t> m_mappings;
    std::unordered_map<std::string, uint32_t> m_locations;
    std::unordered_map<std::string, size_t> m_samples; // stack id and thread -> sample index
    // For each sample, how many locations there were when it was added: where its new frames end, which tells
    // append() in what order a later builder's locations and samples were made.
    std::vector<uint32_t> m_locationsAtSample;
    StringId m_tidKey = 0;
    StringId m_threadNameKey = 0;
    size_t m_samplesAdded = 0;
};

} // namespace emberline::engine
