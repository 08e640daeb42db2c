#include "ui/views/memory/session_leaks.h"

#include "engine/import/load_profile.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace emberline::ui {
namespace {

// A stack by its frames' names, leaf first: the same in the snapshot's profile and in the session's file.
std::string stackKey(const engine::Profile &profile, const engine::FrameTable &frames, uint32_t stack)
{
    std::string key;
    for (const uint32_t location : profile.stacks().stack(stack)) {
        for (const uint32_t frame : frames.locationFrames(location)) {
            key += frames.frame(frame).name;
            key += '\x1f';
        }
    }
    return key;
}

int64_t at(const std::vector<int64_t> &values, size_t i)
{
    return i < values.size() ? values[i] : 0;
}

} // namespace

std::shared_ptr<const SessionLeaks> readSessionLeaks(const QString &sessionProfile,
                                                     const std::shared_ptr<const engine::Profile> &matchedTo,
                                                     const engine::FrameTable &frames, const std::atomic<bool> *cancel)
{
    const engine::Profile &profile = *matchedTo;
    auto leaks = std::make_shared<SessionLeaks>();
    leaks->matchedTo = matchedTo;
    engine::PprofReadOptions options;
    options.cancel = cancel;
    const engine::LoadOutcome file = engine::loadProfile(sessionProfile, options, engine::SessionTimes::NotNeeded);
    if (!file.loaded) {
        leaks->error = file.cancelled ? QStringLiteral("cancelled") : file.error;
        return leaks;
    }
    const engine::Profile &leaked = *file.loaded->profile;
    const engine::MemoryByStack values = engine::memoryByStack(leaked, cancel);
    std::unordered_map<std::string, std::pair<int64_t, int64_t>> byKey; // bytes, objects
    for (uint32_t s = 0; s < leaked.stacks().size(); ++s) {
        const int64_t bytes = at(values.inuseBytes, s);
        const int64_t objects = at(values.inuseObjects, s);
        if (bytes == 0 && objects == 0)
            continue;
        auto &sum = byKey[stackKey(leaked, *file.loaded->frames, s)];
        sum.first += bytes;
        sum.second += objects;
        leaks->bytes += bytes;
        leaks->objects += objects;
    }
    // A leaked block was allocated in some flush: only the stacks that allocated are looked at.
    const engine::MemoryByStack ours = engine::memoryByStack(profile, cancel);
    leaks->inuseBytes.assign(profile.stacks().size(), 0);
    leaks->inuseObjects.assign(profile.stacks().size(), 0);
    for (uint32_t s = 0; s < profile.stacks().size() && !byKey.empty(); ++s) {
        if (at(ours.allocObjects, s) == 0 && at(ours.allocBytes, s) == 0)
            continue;
        const auto it = byKey.find(stackKey(profile, frames, s));
        if (it == byKey.end())
            continue;
        leaks->inuseBytes[s] = it->second.first;
        leaks->inuseObjects[s] = it->second.second;
        byKey.erase(it);
    }
    return leaks;
}

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

std::optional<engine::MemoryPeak> peakIn(const engine::LiveSnapshot &snapshot, const engine::LiveSelection &selection)
{
    if (selection.coversAllTime())
        return engine::livePeak(snapshot);
    // livePeak over a copy that holds the range's flushes alone (the copy shares everything else).
    engine::LiveSnapshot ranged = snapshot;
    ranged.chunks.clear();
    for (const auto &chunk : snapshot.chunks) {
        if (chunk->endNs > selection.startNs && chunk->endNs <= selection.endNs)
            ranged.chunks.push_back(chunk);
    }
    return engine::livePeak(ranged);
}

} // namespace emberline::ui
