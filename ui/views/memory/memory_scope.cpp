#include "ui/views/memory/memory_scope.h"

#include <string_view>

namespace emberline::ui {

engine::MemoryByStack scopeMemory(const engine::LoadedProfile &scope, const std::atomic<bool> *cancel)
{
    const engine::Profile &profile = *scope.profile;
    const auto values = [&](std::string_view dashed, std::string_view underscored) {
        const int type = engine::memoryTypeIndex(profile, dashed, underscored);
        return type >= 0 ? engine::shownValuesPerStack(scope, type, {}, cancel) : std::vector<int64_t>{};
    };
    engine::MemoryByStack out;
    out.allocObjects = values("alloc-samples", "alloc_objects");
    out.allocBytes = values("alloc-space", "alloc_space");
    out.inuseObjects = values("inuse-objects", "inuse_objects");
    out.inuseBytes = values("inuse-space", "inuse_space");
    const int allocObjects = engine::memoryTypeIndex(profile, "alloc-samples", "alloc_objects");
    out.lifetimes = allocObjects >= 0 && engine::tellsLifetimes(profile);
    const std::vector<uint8_t> shortLived = out.lifetimes ? engine::shortLivedSamples(profile) : std::vector<uint8_t>{};
    if (out.lifetimes)
        out.shortLivedObjects = engine::shownValuesPerStack(scope, allocObjects, shortLived, cancel);
    out.sizes = engine::allocationsBySize(
        profile,
        [&](int type, const std::function<void(uint32_t, int64_t)> &visit) {
            engine::forEachShownValue(scope, type, visit, cancel);
        },
        shortLived);
    return out;
}

std::vector<const engine::TimelineChunk *> flushesIn(const engine::LiveSnapshot &snapshot,
                                                     const engine::LiveSelection &selection)
{
    std::vector<const engine::TimelineChunk *> out;
    for (const auto &chunk : snapshot.chunks) {
        if (selection.coversAllTime() || (chunk->endNs > selection.startNs && chunk->endNs <= selection.endNs))
            out.push_back(chunk.get());
    }
    return out;
}

std::optional<engine::FullestFlush> fullestFlushIn(const engine::LiveSnapshot &snapshot,
                                                   const engine::LiveSelection &selection)
{
    if (selection.coversAllTime())
        return engine::fullestFlush(snapshot);
    // fullestFlush over a copy that holds the range's flushes alone (the copy shares everything else).
    engine::LiveSnapshot ranged = snapshot;
    ranged.chunks.clear();
    for (const auto &chunk : snapshot.chunks) {
        if (chunk->endNs > selection.startNs && chunk->endNs <= selection.endNs)
            ranged.chunks.push_back(chunk);
    }
    return engine::fullestFlush(ranged);
}

} // namespace emberline::ui
