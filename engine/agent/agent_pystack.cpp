// The Python frames of a sample (agent_pystack.h): a walk of the thread's own frame chain (agent_python.cpp), and the
// code objects met for the first time in this process image described in the ring before the sample that names them.
// Which code objects were described is kept in a table of their keys (address and fingerprint, mixed with the ring's
// serial): claimed by the thread that writes the description, set back when there was no room for it. A full table
// describes again (the session keeps the first).
//
// Thread: any sampling thread; lock-free.

#include "engine/agent/agent_pystack.h"

#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_writer.h"

#include <string.h>

#include <atomic>

namespace emberline::agent {
namespace {

constexpr int kCodeSlots = 1 << 14;
constexpr int kCodeProbes = 16;
std::atomic<uint64_t> g_codes[kCodeSlots];
std::atomic<uint64_t> g_ringSerial{1};
// A code object's description is written whole up to this size (its strings and line table cut beyond it).
constexpr size_t kMaxCodeFacts = 6144;

uint64_t codeKey(uint64_t code, uint32_t tag)
{
    uint64_t h = (code ^ (uint64_t(tag) << 32) ^ g_ringSerial.load(std::memory_order_relaxed) * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h | 1;
}

enum class Claim { Known, Claimed, Full };

Claim claimCode(uint64_t key, std::atomic<uint64_t> *&slot)
{
    for (int probe = 0; probe < kCodeProbes; ++probe) {
        std::atomic<uint64_t> &s = g_codes[(key + uint64_t(probe)) & (kCodeSlots - 1)];
        uint64_t seen = s.load(std::memory_order_acquire);
        if (seen == key)
            return Claim::Known;
        if (seen == 0 && s.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) {
            slot = &s;
            return Claim::Claimed;
        }
        if (seen == key)
            return Claim::Known;
    }
    return Claim::Full;
}

// Describes `code` in the ring; false when there was no room.
bool describeCode(const PythonTarget &target, uint64_t code, bool wait)
{
    alignas(8) uint8_t facts[kMaxCodeFacts];
    const size_t factBytes = pythonCodeFacts(target, code, facts, sizeof facts);
    if (factBytes < sizeof(PythonCodeFacts))
        return true; // nothing readable to say: the session names the frame by its address
    const uint32_t bytes = uint32_t((sizeof(PythonCodeRecord) - sizeof(PythonCodeFacts) + factBytes + 7) & ~size_t(7));
    AgentScope scope;
    auto *record = scope.reserve<PythonCodeRecord>(bytes, keptForFrees(), wait);
    if (!record)
        return false;
    record->tid = currentThreadId();
    record->reserved = 0;
    record->timeNs = nowNs();
    memcpy(&record->facts, facts, factBytes);
    scope.publish(RecordType::PythonCode);
    return true;
}

// Whether `code` is described in this ring: known to this thread or to the process image, or described now; false
// when there was no room for its description (a later sample tries again).
bool describedAlready(const PythonTarget &target, uint64_t code, bool wait)
{
    const uint64_t key = codeKey(code, pythonCodeTag(target, code));
    uint64_t &known = t_state.pythonKnown[key & (kPythonKnownCodes - 1)];
    if (known == key)
        return true;
    std::atomic<uint64_t> *slot = nullptr;
    const Claim claim = claimCode(key, slot);
    if (claim == Claim::Known) {
        known = key;
        return true;
    }
    if (describeCode(target, code, wait)) {
        known = claim == Claim::Claimed ? key : known;
        return true;
    }
    if (slot) {
        uint64_t mine = key;
        slot->compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
    }
    return false;
}

// pythonStackHash's work (never 0).
uint64_t hashFrames(const PythonStack &stack)
{
    // Each frame mixed apart with its depth, then summed: the frames' mixes do not wait on each other (a chain of
    // multiplies through every frame cost this 1.7% of a CPython program's time in exact mode).
    uint64_t sum = uint64_t(stack.count) << 16 | stack.flags;
    for (uint32_t i = 0; i < stack.count; ++i) {
        const PythonFrame &f = stack.frames[i];
        uint64_t x = f.code * 0x9E3779B97F4A7C15ull + (uint64_t(uint32_t(f.instruction)) << 32 | f.flags) + i;
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 29;
        sum += x;
    }
    sum ^= sum >> 32;
    sum *= 0x94d049bb133111ebull;
    sum ^= sum >> 29;
    return sum != 0 ? sum : 1;
}

// The frames of a sample whose code objects the thread's memo remembers (the leaf's first).
constexpr int kSealedFrames = 64;

// Every checkEvery-th chain a thread's walk gave again from the words it kept (the stack walks' share: the session's
// setting) is walked anew, without the memo, and the two compared in the ring's counters.
void checkRepeat(const PythonTarget &target, PythonCodeMemo &memo, const PythonStack &stack)
{
    const uint32_t every = g_ring->checkEvery.load(std::memory_order_relaxed);
    if (every == 0)
        return;
    if (memo.checkLeft == 0 || memo.checkLeft > every)
        memo.checkLeft = every;
    if (--memo.checkLeft != 0)
        return;
    PythonFrame anew[PythonCodeMemo::kChainVisits];
    uint32_t flags = 0;
    const int count = pythonWalk(target, t_state.python, anew, PythonCodeMemo::kChainVisits, flags);
    bool same = count == int(stack.count) && flags == stack.flags;
    for (int i = 0; same && i < count; ++i)
        same = anew[i].code == stack.frames[i].code && anew[i].instruction == stack.frames[i].instruction &&
               anew[i].flags == stack.frames[i].flags;
    g_ring->pythonRepeatChecks.fetch_add(1, std::memory_order_relaxed);
    if (!same)
        g_ring->pythonRepeatDiffers.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

void gatherPython(PythonStack &stack, bool wait)
{
    stack.count = 0;
    stack.flags = 0;
    stack.hash = 0;
    if (!g_ring || g_ring->pythonState.load(std::memory_order_acquire) != 1)
        return;
    const PythonTarget &target = g_ring->python;
    uint32_t flags = 0;
    uint64_t addresses[kSealedFrames];
    PythonCodeMemo *memo = holdPythonMemo();
    const int count =
        pythonWalk(target, t_state.python, stack.frames, kMaxPythonFrames, flags, addresses, kSealedFrames, memo);
    stack.count = uint16_t(count > 0 ? count : 0);
    stack.flags = uint16_t(flags);
    const uint64_t serial = g_ringSerial.load(std::memory_order_relaxed);
    if (memo && memo->repeated)
        checkRepeat(target, *memo, stack);
    if (memo) {
        // The kept chain given again, not an instruction of it moved: the frames hashed at the walk before. Else hashed
        // now, and kept with the chain where the walk kept it whole (its frames are the chain's given ones).
        if (memo->repeated && !memo->moved && memo->givenHash != 0 && stack.flags == 0) {
            stack.hash = memo->givenHash;
        } else {
            stack.hash = hashFrames(stack);
            const bool kept = memo->chainState != 0 && memo->chainGiven == int32_t(stack.count) && stack.flags == 0;
            memo->givenHash = kept ? stack.hash : 0;
        }
    }
    // The thread's last chain again, every code object of it described in this ring already.
    if (memo && memo->repeated && memo->described == serial) {
        releasePythonMemo();
        return;
    }
    bool described = true;
    for (int i = 0; i < stack.count; ++i) {
        const uint64_t code = stack.frames[i].code;
        // A recursion's frames share their code object: it was claimed (or described) at the frame before.
        if (i > 0 && code == stack.frames[i - 1].code)
            continue;
        // The same frame running the same code object as at an earlier sample (agent_python.h's PythonCodeMemo): the
        // code was described then, when that was in this ring.
        PythonCodeMemo::Entry *entry = nullptr;
        if (memo && i < kSealedFrames) {
            entry = &memo->at(addresses[i]);
            if (entry->seal != PythonCodeMemo::sealOf(addresses[i], code))
                entry = nullptr; // another frame's, met later in this walk
            else if (entry->described == serial)
                continue;
        }
        if (!describedAlready(target, code, wait))
            described = false;
        else if (entry)
            entry->described = serial;
    }
    if (memo) {
        if (described && memo->chainState != 0)
            memo->described = serial;
        releasePythonMemo();
    }
}

void gatherPythonTimed(PythonStack &stack)
{
    // A process with no CPython the session found reads no clock.
    if (!g_ring || g_ring->pythonState.load(std::memory_order_acquire) != 1) {
        stack.count = 0;
        stack.flags = 0;
        return;
    }
    const uint64_t start = nowNs();
    gatherPython(stack, false);
    if (g_ring && g_ring->pythonState.load(std::memory_order_relaxed) == 1) {
        g_ring->pythonWalkNs[handlerBucket(nowNs() - start)].fetch_add(1, std::memory_order_relaxed);
        g_ring->pythonWalkFrames.fetch_add(stack.count, std::memory_order_relaxed);
    }
}

void putPython(PythonFields &fields, void *tail, const PythonStack &stack)
{
    fields.pythonFrames = stack.count;
    fields.pythonFlags = stack.flags;
    fields.pythonReserved = 0;
    if (stack.count != 0)
        memcpy(tail, stack.frames, stack.bytes());
}

uint64_t pythonStackHash(const PythonStack &stack)
{
    if (stack.count == 0 && stack.flags == 0)
        return 0;
    return stack.hash != 0 ? stack.hash : hashFrames(stack);
}

void pythonForget()
{
    g_ringSerial.fetch_add(1, std::memory_order_relaxed);
}

} // namespace emberline::agent
