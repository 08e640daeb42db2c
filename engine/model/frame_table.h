#pragma once

#include "engine/model/profile.h"

#include <QString>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

// A frame as the user sees it: one function (by name and source file), or, for a location without symbols,
// `module+0xoffset`.
struct Frame {
    std::string name;
    std::string file;
    int64_t line = 0;   // the function's start line (a Python function's: the lowest known), 0 when unknown
    std::string module; // basename of the mapping's file, empty when the profile has no mappings
    bool symbolized = true;
};

// The order call trees list frames in: by name, and native code before a Python function of the same name (the
// only frames that share a name, FrameTable). Strict, and the same in every table, so that the children of two
// trees merge in one pass (a comparison, a live refresh).
bool frameOrderLess(const Frame &a, const Frame &b);

// Maps every location of a profile to its frames, de-duplicating functions that share a name (as `go tool pprof`
// does at function granularity, where file names are dropped before aggregating), so that derived views
// aggregate by what the user reads. A Python function (isPythonFrame) never shares a frame with native code: the
// two may have one name (a script's `main` above the interpreter's), and then two frames do.
//
// Thread: built on a worker from an immutable Profile; immutable afterwards.
class FrameTable {
public:
    explicit FrameTable(const Profile &profile);
    // The frames of two tables matched by name, as a comparison of two profiles groups them: `first`'s frames
    // with their ids unchanged, then those of `second` that `first` lacks. `secondToUnion` maps each of
    // `second`'s ids to its id here. The table knows no locations.
    static FrameTable unionOf(const FrameTable &first, const FrameTable &second, std::vector<uint32_t> &secondToUnion);

    size_t size() const { return m_frames.size(); }
    const Frame &frame(uint32_t id) const { return m_frames[id]; }
    // Frames of one location, inlined callee first (the order of Location::lines).
    std::span<const uint32_t> locationFrames(uint32_t locationIndex) const
    {
        return {m_locFrames.data() + m_locOffsets[locationIndex],
                m_locOffsets[locationIndex + 1] - m_locOffsets[locationIndex]};
    }
    // Appends the frames of a stack (location indices, leaf first) to `out`, root first.
    void expandRootFirst(std::span<const uint32_t> stack, std::vector<uint32_t> &out) const;
    // Frame ids whose name matches exactly (a Python function's and native code's, when both have it); empty if none.
    std::vector<uint32_t> findByName(std::string_view name) const;
    // Per frame id, its place among the frames ordered by name (no two frames share one, even of one name).
    // Sorted once per table, on first use from any thread, and kept: every call tree built over the table orders
    // children by it, and sorting the names again per tree cost more than building a small tree.
    const std::vector<uint32_t> &nameRank() const;

private:
    FrameTable() = default;
    struct NameRank {
        std::once_flag once;
        std::vector<uint32_t> rank;
    };

    std::vector<Frame> m_frames;
    std::vector<uint32_t> m_locFrames;
    std::vector<uint32_t> m_locOffsets;
    std::shared_ptr<NameRank> m_nameRank = std::make_shared<NameRank>();
};

// The frames' names as the window draws them (QString), one per frame id: built once per frame table, on the
// worker that built the table, so that no paint converts a name.
std::shared_ptr<const std::vector<QString>> frameDisplayNames(const FrameTable &frames);

} // namespace emberline::engine
