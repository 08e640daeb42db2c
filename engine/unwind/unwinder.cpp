#include "engine/unwind/unwinder.h"

#include "engine/unwind/libunwind_signals.h"
#include "engine/unwind/table_unwind.h"
#include "engine/unwind/unwind_table_store.h"

#include <libunwind.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

// libunwind exports this search over a remote .eh_frame_hdr table but does not declare it in its headers.
// NOLINTNEXTLINE(bugprone-reserved-identifier): libunwind's own name
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                                  unw_proc_info_t *pi, int need_unwind_info, void *arg);

namespace emberline::engine {
namespace {

// Reads above the copy this far from the stack pointer count as "the copy was too small"; farther ones are
// stray pointers, not stack.
constexpr uint64_t kStackReachBytes = 8u << 20;
// libunwind's per-address-space cache of register rules by pc (a power of two, at most 2^15).
constexpr size_t kUnwindCacheEntries = 4096;

struct Context {
    const UnwindInput *input = nullptr;
    bool noInfo = false;         // the last procedure lookup found no unwind table
    uint64_t missedStackEnd = 0; // the highest end of a read above the copied stack (0: none)
    uint64_t stackReadEnd = 0;   // the highest end of a read from the copied stack (0: none)
};

int perfIndexOf(unw_regnum_t reg)
{
    switch (reg) {
    case UNW_X86_64_RAX:
        return RegAX;
    case UNW_X86_64_RDX:
        return RegDX;
    case UNW_X86_64_RCX:
        return RegCX;
    case UNW_X86_64_RBX:
        return RegBX;
    case UNW_X86_64_RSI:
        return RegSI;
    case UNW_X86_64_RDI:
        return RegDI;
    case UNW_X86_64_RBP:
        return RegBP;
    case UNW_X86_64_RSP:
        return RegSP;
    case UNW_X86_64_RIP:
        return RegIP;
    default:
        if (reg >= UNW_X86_64_R8 && reg <= UNW_X86_64_R15)
            return RegR8 + (reg - UNW_X86_64_R8);
        return -1;
    }
}

bool readStack(const UnwindInput &in, uint64_t address, void *out, size_t size)
{
    // Compared as offsets into the copy: `address` may be anything a register held (a frame pointer register used
    // for data), and address + size near the top of the address space would wrap around.
    const uint64_t sp = in.regs[RegSP];
    if (address < sp || address - sp > in.stack.size() || size > in.stack.size() - (address - sp))
        return false;
    std::memcpy(out, in.stack.data() + (address - sp), size);
    return true;
}

// In a .eh_frame_hdr table (pairs of int32: start pc, FDE, sorted by start pc): how many entries start at or before
// `relative`, the same comparison as libunwind's own search. 0: none does.
uint64_t fdeEntryBefore(const uint8_t *table, uint64_t count, int32_t relative)
{
    uint64_t lo = 0, hi = count;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        int32_t start = 0;
        std::memcpy(&start, table + mid * 8, sizeof start);
        if (relative < start)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

int findProcInfo(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int needUnwindInfo, void *arg)
{
    auto *ctx = static_cast<Context *>(arg);
    const MappedModule *m = ctx->input->map->find(ip);
    ctx->noInfo = !m || !m->image || !m->image->fdeCount();
    if (ctx->noInfo)
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    std::memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->start;
    di.end_ip = m->end;
    di.u.rti.segbase = m->image->ehFrameHdrVaddr() + static_cast<uint64_t>(m->bias);
    di.u.rti.table_data = m->image->fdeTableVaddr() + static_cast<uint64_t>(m->bias);
    di.u.rti.table_len = m->image->fdeCount() * 8 / sizeof(unw_word_t);
    if (const uint8_t *table = m->image->fdeTableBytes()) {
        // libunwind would binary-search the table through accessMem, a read per probe: search it here, in the
        // image's own bytes, and hand libunwind the one entry it would have found.
        const auto relative = static_cast<int32_t>(ip - di.u.rti.segbase);
        const uint64_t index = fdeEntryBefore(table, m->image->fdeCount(), relative);
        if (index == 0)
            return -UNW_ENOINFO; // below the first entry: libunwind's answer too
        di.u.rti.table_data += (index - 1) * 8;
        di.u.rti.table_len = 8 / sizeof(unw_word_t);
    }
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, needUnwindInfo, arg);
}

void putUnwindInfo(unw_addr_space_t, unw_proc_info_t *, void *) {}

int getDynInfoListAddr(unw_addr_space_t, unw_word_t *, void *)
{
    return -UNW_ENOINFO;
}

int accessMem(unw_addr_space_t, unw_word_t address, unw_word_t *value, int write, void *arg)
{
    if (write)
        return -UNW_EREADONLYREG;
    auto *ctx = static_cast<Context *>(arg);
    if (readStack(*ctx->input, address, value, sizeof *value)) {
        ctx->stackReadEnd = std::max<uint64_t>(ctx->stackReadEnd, address + sizeof *value);
        return 0;
    }
    if (ctx->input->map->readImage(address, value, sizeof *value))
        return 0;
    const uint64_t copyEnd = ctx->input->regs[RegSP] + ctx->input->stack.size();
    if (address >= copyEnd && address - copyEnd < kStackReachBytes)
        ctx->missedStackEnd = std::max<uint64_t>(ctx->missedStackEnd, address + sizeof *value);
    return -UNW_EINVAL;
}

int accessReg(unw_addr_space_t, unw_regnum_t reg, unw_word_t *value, int write, void *arg)
{
    if (write)
        return -UNW_EREADONLYREG;
    const auto *ctx = static_cast<Context *>(arg);
    const int index = perfIndexOf(reg);
    if (index < 0 || static_cast<size_t>(index) >= ctx->input->regs.size())
        return -UNW_EBADREG;
    *value = ctx->input->regs[index];
    return 0;
}

int accessFpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t *, int, void *)
{
    return -UNW_EBADREG;
}

int resume(unw_addr_space_t, unw_cursor_t *, void *)
{
    return -UNW_EINVAL;
}

int getProcName(unw_addr_space_t, unw_word_t, char *, size_t, unw_word_t *, void *)
{
    return -UNW_ENOINFO; // names come from the symbolizer at flush time
}

unw_accessors_t g_accessors = {findProcInfo, putUnwindInfo, getDynInfoListAddr, accessMem, accessReg,
                               accessFpreg,  resume,        getProcName};

// Why an unfinished walk stopped: the copied stack ended under the next frame (a read past its end, or a
// stack pointer already beyond it), or there was no unwind table for the last pc.
void classifyUnwindStop(const UnwindInput &input, unw_cursor_t *cursor, const Context *ctx, UnwindOutput &out)
{
    const uint64_t sp0 = input.regs[RegSP];
    const uint64_t copyEnd = sp0 + input.stack.size();
    unw_word_t sp = 0;
    const bool spPastCopy =
        unw_get_reg(cursor, UNW_REG_SP, &sp) >= 0 && sp >= copyEnd && sp - copyEnd < kStackReachBytes;
    if (ctx->missedStackEnd > 0 || spPastCopy) {
        out.stop = UnwindStop::StackCopyEnded;
        out.stackNeeded = std::max<uint64_t>(ctx->missedStackEnd, spPastCopy ? sp + 16 : 0) - sp0;
    } else if (ctx->noInfo) {
        out.stop = UnwindStop::NoUnwindInfo;
    }
}

// Steps from frame to frame until the outermost frame, a failed step or maxFrames.
void walkFrames(unw_cursor_t &cursor, size_t maxFrames, UnwindOutput &out)
{
    while (out.ips.size() < maxFrames) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        out.ips.push_back(out.ips.empty() ? ip : ip - 1);
        const int step = unw_step(&cursor);
        if (step == 0) {
            out.complete = true;
            out.stop = UnwindStop::Outermost;
            return;
        }
        if (step < 0)
            break;
    }
    if (out.ips.size() >= maxFrames)
        out.stop = UnwindStop::MaxFrames;
}

} // namespace

struct Unwinder::Space {
    unw_addr_space_t as = nullptr;
    uint64_t mapGeneration = 0;
};

UnwinderOptions UnwinderOptions::fromEnvironment()
{
    UnwinderOptions options;
    const char *tables = std::getenv("EMBERLINE_UNWIND_TABLES");
    options.tables = !tables || (std::strcmp(tables, "off") != 0 && std::strcmp(tables, "0") != 0);
    options.storeDirectory = unwindTableStoreDirectory();
    return options;
}

Unwinder::Unwinder() : Unwinder(UnwinderOptions::fromEnvironment()) {}

Unwinder::Unwinder(const UnwinderOptions &options)
{
    skipLibunwindSignalMasks();
    if (options.tables)
        m_tables = std::make_unique<TableUnwinder>(options.storeDirectory, options.buildAside);
}

UnwinderStats Unwinder::stats() const
{
    UnwinderStats stats = m_stats;
    if (m_tables) {
        stats.modulesTabled = m_tables->modulesTabled();
        stats.modulesUntabled = m_tables->modulesUntabled();
        stats.tableBuildNs = m_tables->buildNs();
        stats.fallbackNoTable = m_tables->fallbacks(TableUnwinder::Fallback::NoTable);
        stats.fallbackRow = m_tables->fallbacks(TableUnwinder::Fallback::Row);
        stats.fallbackOutOfCopy = m_tables->fallbacks(TableUnwinder::Fallback::OutOfCopy);
        stats.fallbackBadFrame = m_tables->fallbacks(TableUnwinder::Fallback::BadFrame);
    }
    return stats;
}

bool Unwinder::waitForTables(std::chrono::milliseconds timeout)
{
    return !m_tables || m_tables->waitForTables(timeout);
}

Unwinder::~Unwinder()
{
    for (auto &[pid, space] : m_spaces) {
        unw_destroy_addr_space(space->as);
        delete space;
    }
}

Unwinder::Space &Unwinder::spaceFor(int pid, const ProcessMap *map)
{
    auto it = m_spaces.find(pid);
    if (it == m_spaces.end()) {
        auto *space = new Space;
        space->as = unw_create_addr_space(&g_accessors, 0);
        // The address space's own cache of register rules by pc. (UNW_CACHE_PER_THREAD would ask for the same: a
        // libunwind built without thread-local storage, as Debian's, turns it into this one.) Its lock blocks
        // signals, a system call that skipLibunwindSignalMasks() answers in process.
        unw_set_caching_policy(space->as, UNW_CACHE_GLOBAL);
        // The default cache holds 128 frames' register rules, fewer than a deep program's distinct pcs: a miss
        // parses the FDE again and allocates from libunwind's pool, which blocks signals around its lock (four
        // system calls). kUnwindCacheEntries entries cost about 300 bytes each per process.
        unw_set_cache_size(space->as, kUnwindCacheEntries, 0);
        space->mapGeneration = map->generation();
        it = m_spaces.emplace(pid, space).first;
    } else if (it->second->mapGeneration != map->generation()) {
        // A library came or went: cached procedure info may describe addresses that now mean something else.
        unw_flush_cache(it->second->as, 0, 0);
        it->second->mapGeneration = map->generation();
    }
    return *it->second;
}

void Unwinder::forgetProcess(int pid)
{
    auto it = m_spaces.find(pid);
    if (it == m_spaces.end())
        return;
    unw_destroy_addr_space(it->second->as);
    delete it->second;
    m_spaces.erase(it);
}

void Unwinder::unwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames)
{
    if (m_tables && input.map && input.regs.size() >= RegCount && maxFrames > 0) {
        if (m_tables->unwind(input, out, maxFrames)) {
            out.byTables = true;
            ++m_stats.tableWalks;
            return;
        }
        ++m_stats.tableFallbacks;
    }
    unwindWithLibunwind(input, out, maxFrames);
}

void Unwinder::unwindWithLibunwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames)
{
    ++m_stats.libunwindWalks;
    out.byTables = false;
    out.ips.clear();
    out.complete = false;
    out.usedFramePointers = false;
    out.stop = UnwindStop::Other;
    out.stackNeeded = 0;
    out.stackUsed = 0;
    Space &space = spaceFor(input.pid, input.map);
    Context ctx{&input};
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, space.as, &ctx) < 0) {
        out.ips.push_back(input.regs[RegIP]);
        return;
    }
    walkFrames(cursor, maxFrames, out);
    if (ctx.stackReadEnd > input.regs[RegSP])
        out.stackUsed = ctx.stackReadEnd - input.regs[RegSP];
    if (!out.complete && out.stop != UnwindStop::MaxFrames)
        classifyUnwindStop(input, &cursor, &ctx, out);
}

void Unwinder::unwindFramePointers(const UnwindInput &input, UnwindOutput &out, size_t maxFrames) const
{
    out.ips.clear();
    out.complete = false;
    out.usedFramePointers = true;
    out.byTables = false;
    out.stop = UnwindStop::Other;
    out.stackNeeded = 0;
    out.stackUsed = 0;
    out.ips.push_back(input.regs[RegIP]);
    uint64_t fp = input.regs[RegBP];
    uint64_t lastFp = 0;
    const uint64_t copyEnd = input.regs[RegSP] + input.stack.size();
    while (out.ips.size() < maxFrames) {
        uint64_t frame[2];
        if (fp <= lastFp || !readStack(input, fp, frame, sizeof frame)) {
            if (fp > lastFp && fp + sizeof frame > copyEnd && fp < copyEnd + kStackReachBytes) {
                out.stop = UnwindStop::StackCopyEnded;
                out.stackNeeded = fp + sizeof frame - input.regs[RegSP];
            }
            break;
        }
        out.stackUsed = fp + sizeof frame - input.regs[RegSP];
        const uint64_t ret = frame[1];
        if (ret == 0) {
            out.complete = true;
            out.stop = UnwindStop::Outermost;
            break;
        }
        if (!input.map->find(ret))
            break;
        out.ips.push_back(ret - 1);
        lastFp = fp;
        fp = frame[0];
        if (fp == 0) {
            out.complete = true;
            out.stop = UnwindStop::Outermost;
            break;
        }
    }
}

} // namespace emberline::engine
