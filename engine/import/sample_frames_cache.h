#pragma once

#include "engine/import/frame_text_cache.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// The call chains of the samples a perf script parser has read, known by the text of their frame lines: a
// sample whose frame lines are byte for byte those of an earlier one has its locations, without a line being
// parsed again. In a recording most samples repeat a few hundred call chains, so most samples cost one hash and
// one comparison over their text instead of a lookup per frame.
//
// The cache holds at most kMaxTextBytes of text, and stops being asked when few samples repeat (fewer than one in
// four of the last kWindow): a file of distinct stacks pays a little over the frame-by-frame reading.
//
// Thread: owned by one parser's thread.
class SampleFramesCache {
public:
    // The frame lines at the front of `ahead` (each starts with a blank and ends with '\n') up to the empty line
    // ("\n" alone) that ends the sample: their text, without the empty line, and how many they are.
    struct Block {
        std::string_view text;
        size_t lines = 0;
    };
    // An empty block when `ahead` does not hold such lines whole.
    static Block frameBlock(std::string_view ahead);

    bool worthAsking() const { return !m_off; }
    // The frame lines at the front of `ahead` (frameBlock) and, when an earlier sample had the same text, its
    // locations, leaf first (null when none had). The last sample found or added is compared first, without
    // looking for the lines' ends: the next sample often repeats it.
    const std::span<const uint32_t> *findAtFront(std::string_view ahead, Block &block);
    void insert(std::string_view text, const std::vector<uint32_t> &locations);

private:
    void count(bool hit);
    void remember(std::string_view text, size_t lines, size_t index);

    static constexpr size_t kMaxTextBytes = 64u << 20;
    static constexpr size_t kWindow = 4096;

    FrameTextCache m_index;                          // text -> index into m_stacks
    std::vector<std::span<const uint32_t>> m_stacks; // into m_frames' chunks
    std::vector<std::vector<uint32_t>> m_frames;     // chunks that never move once filled
    size_t m_textBytes = 0;
    std::string m_lastText; // the frame text of m_stacks[m_last]
    size_t m_lastLines = 0;
    size_t m_last = SIZE_MAX;
    size_t m_lookups = 0;
    size_t m_hits = 0;
    bool m_off = false;
};

} // namespace emberline::engine
