#include "engine/unwind/table_unwind.h"

#include "engine/common/clock.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwind_table_store.h"
#include "engine/unwind/unwinder.h"

#include <algorithm>
#include <cstring>
#include <ctime>

namespace emberline::engine {
namespace {

size_t slotOf(uint64_t address)
{
    return static_cast<size_t>((address * 0x9e3779b97f4a7c15ull) >> 52); // 12 bits: TableUnwinder::kSlots
}

} // namespace

TableUnwinder::TableUnwinder(std::string storeDirectory, bool buildAside)
    : m_storeDirectory(std::move(storeDirectory)), m_buildAside(buildAside), m_builder({"emberline-tables", 0})
{
}

TableUnwinder::~TableUnwinder()
{
    m_builder.stop(WorkerStop::Discard);
}

void TableUnwinder::make(Build &build) const
{
    const uint64_t startNs = uint64_t(clockNs(CLOCK_MONOTONIC));
    std::shared_ptr<const ModuleUnwindTable> table = loadStoredUnwindTable(m_storeDirectory, build.buildId, build.path);
    if (!table) {
        auto built = buildUnwindTable(build.path, build.buildId);
        if (built.ok()) {
            table = built.value();
            if (!build.buildId.empty())
                (void)storeUnwindTable(m_storeDirectory, *table);
        }
    }
    build.ns = uint64_t(clockNs(CLOCK_MONOTONIC)) - startNs;
    // Rows taken from .debug_frame cover addresses libunwind finds no FDE for (it walks frame pointers there).
    if (table && table->buildId == build.buildId && table->stats.debugFrameFdes == 0 && !table->rows.empty())
        build.table = std::move(table);
}

void TableUnwinder::adopt(Entry &entry, Build &build)
{
    m_buildNs += build.ns;
    if (!build.table)
        return;
    entry.table = std::move(build.table);
    entry.view = entry.table->view();
    ++m_tabled;
}

void TableUnwinder::adoptBuilt()
{
    std::vector<Build> built;
    {
        std::lock_guard lock(m_builtMutex);
        built.swap(m_built);
    }
    m_adopted += built.size();
    for (Build &build : built) {
        auto it = m_tables.find(build.key);
        if (it == m_tables.end() || !it->second.pending)
            continue;
        it->second.pending = false;
        --m_pending;
        adopt(it->second, build);
    }
}

bool TableUnwinder::waitForTables(std::chrono::milliseconds timeout)
{
    if (m_buildAside)
        (void)m_builder.waitIdle(timeout);
    adoptBuilt();
    return m_pending == 0;
}

TableUnwinder::Entry TableUnwinder::makeEntry(const MappedModule &module)
{
    Entry entry;
    entry.image = module.image;
    // libunwind finds a module's FDEs through its .eh_frame_hdr and walks frame pointers where there is none: such a
    // module is left to it, so that both walks give the same stack.
    if (!module.image || module.image->fdeCount() == 0 || module.fileMissing || module.path.empty() ||
        module.path.front() != '/')
        return entry;
    Build build{module.image.get(), module.path, module.image->buildId(), nullptr, 0};
    if (m_buildAside) {
        // The builder's thread is started by the first table to build (many unwinders never need one).
        m_builder.start({.item = [this](Build &made) {
            make(made);
            std::lock_guard lock(m_builtMutex);
            m_built.push_back(std::move(made));
            m_builds.fetch_add(1, std::memory_order_release);
        }});
        auto posted = m_builder.post(std::move(build));
        if (posted.queued) {
            entry.pending = true;
            ++m_pending;
            return entry;
        }
        build = std::move(*posted.dropped); // the builder stopped: built here
    }
    make(build);
    adopt(entry, build);
    return entry;
}

const agent::UnwindTable *TableUnwinder::tableFor(const MappedModule &module)
{
    const ElfImage *image = module.image.get();
    if (image != m_lastImage || !m_lastEntry) {
        auto it = m_tables.find(image);
        if (it == m_tables.end())
            it = m_tables.emplace(image, makeEntry(module)).first;
        m_lastImage = image;
        m_lastEntry = &it->second;
    }
    return m_lastEntry->view.count ? &m_lastEntry->view : nullptr;
}

bool TableUnwinder::findRow(const ProcessMap &map, uint64_t address, agent::UnwindRow &row)
{
    const MappedModule *module = map.find(address);
    if (!module)
        return false;
    const agent::UnwindTable *table = tableFor(*module);
    if (!table)
        return false;
    const agent::UnwindRow *found = agent::findUnwindRow(*table, address - static_cast<uint64_t>(module->bias));
    if (!found)
        return false;
    row = *found;
    return true;
}

bool TableUnwinder::unwind(const UnwindInput &input, UnwindOutput &out, size_t maxFrames)
{
    const uint64_t sp0 = input.regs[RegSP];
    const uint8_t *copy = input.stack.data();
    const agent::StackBounds bounds{sp0, sp0 + input.stack.size()};
    uint64_t readEnd = 0;
    // The step checks every address against the bounds before it reads.
    auto read = [copy, sp0, &readEnd](uint64_t address, uint64_t &value) {
        std::memcpy(&value, copy + (address - sp0), sizeof value);
        readEnd = std::max(readEnd, address + sizeof value);
        return true;
    };
    if (m_builds.load(std::memory_order_acquire) != m_adopted)
        adoptBuilt();
    // The copy was written by the kernel moments ago, on the sampled thread's CPU: each frame's read misses the cache,
    // and the walk learns where to read next only from the read before. Asking for the lines the last walk used up
    // front lets them arrive together (perf: three quarters of this walk's time sat on those reads).
    const size_t ahead = std::min<size_t>(input.stack.size(), m_prefetchBytes);
    for (size_t offset = 0; offset < ahead; offset += 64)
        __builtin_prefetch(copy + offset);
    agent::UnwindRegs regs{input.regs[RegIP], sp0, input.regs[RegBP]};
    if (regs.pc == 0 || bounds.high < sp0)
        return false;
    const uint64_t generation = input.map->generation();
    bool rbpKnown = true; // the interrupted frame's RBP is the sample's
    out.ips.clear();
    out.complete = false;
    out.usedFramePointers = false;
    out.stop = UnwindStop::Other;
    out.stackNeeded = 0;
    out.stackUsed = 0;
    while (out.ips.size() < maxFrames) {
        // The interrupted frame's pc is the instruction about to run; a caller's is a return address, looked up (and
        // reported) one byte back, inside its call.
        const uint64_t pc = out.ips.empty() ? regs.pc : regs.pc - 1;
        out.ips.push_back(pc);
        Slot &slot = m_slots[slotOf(pc)];
        if (slot.address != pc || slot.map != input.map || slot.generation != generation) {
            if (!findRow(*input.map, pc, slot.row)) {
                slot.map = nullptr;
                ++m_fallbacks[size_t(Fallback::NoTable)];
                return false;
            }
            slot.address = pc;
            slot.map = input.map;
            slot.generation = generation;
        }
        // A row may place the caller's RBP below the sampled stack pointer (in an epilogue, after the pop, the CFI
        // still names its old slot): outside the copy, so unknown. libunwind reads a saved register only when it
        // needs its value, and so does this walk: RBP stays unknown until a row restores it, and a row whose CFA is
        // RBP's leaves the stack to libunwind then.
        agent::UnwindRow row = slot.row;
        const bool rbpRestored = row.rbpSlot != 0;
        if (row.kind == agent::UnwindKind::CfaRbp && !rbpKnown) {
            ++m_fallbacks[size_t(Fallback::OutOfCopy)];
            return false;
        }
        if (rbpRestored && (row.kind == agent::UnwindKind::CfaRsp || row.kind == agent::UnwindKind::CfaRbp)) {
            const uint64_t cfa = (row.kind == agent::UnwindKind::CfaRsp ? regs.sp : regs.bp) + row.cfaOffset;
            if (cfa - uint64_t(-int64_t(row.rbpSlot)) * 8 < sp0)
                row.rbpSlot = 0; // not read: unknown once stepped
        }
        const agent::UnwindStep step = agent::unwindStepWithRow(row, bounds, regs, read);
        if (step.status == agent::UnwindStatus::Stepped && rbpRestored)
            rbpKnown = row.rbpSlot != 0;
        if (step.status == agent::UnwindStatus::End) {
            out.complete = true;
            out.stop = UnwindStop::Outermost;
            break;
        }
        if (step.status != agent::UnwindStatus::Stepped) {
            const Fallback why = step.status == agent::UnwindStatus::Fallback      ? Fallback::Row
                                 : step.status == agent::UnwindStatus::OutOfBounds ? Fallback::OutOfCopy
                                 : step.status == agent::UnwindStatus::BadFrame    ? Fallback::BadFrame
                                                                                   : Fallback::NoTable;
            ++m_fallbacks[size_t(why)];
            return false;
        }
    }
    if (!out.complete)
        out.stop = UnwindStop::MaxFrames;
    if (readEnd > sp0)
        out.stackUsed = readEnd - sp0;
    m_prefetchBytes = std::clamp<uint64_t>(out.stackUsed + 256, kMinPrefetchBytes, kMaxPrefetchBytes);
    return true;
}

} // namespace emberline::engine
