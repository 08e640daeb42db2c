#include "engine/unwind/unwind_rows.h"

#include <algorithm>

namespace emberline::engine {
namespace {

using agent::UnwindKind;
using agent::UnwindRow;

bool walkable(UnwindKind kind)
{
    return !agent::isFallback(kind);
}

bool inPlt(const std::vector<CodeSection> &sections, uint64_t address)
{
    return std::any_of(sections.begin(), sections.end(),
                       [&](const CodeSection &s) { return s.plt && address >= s.start && address < s.end; });
}

// The sections' addresses that no FDE covers: a PLT's, or code without unwind information.
std::vector<UnwindSpan> uncovered(const std::vector<UnwindSpan> &laid, const std::vector<CodeSection> &sections)
{
    std::vector<UnwindSpan> gaps;
    for (const CodeSection &section : sections) {
        const UnwindKind kind = section.plt ? UnwindKind::Plt : UnwindKind::NoFde;
        uint64_t cursor = section.start;
        auto it = std::upper_bound(laid.begin(), laid.end(), section.start,
                                   [](uint64_t address, const UnwindSpan &s) { return address < s.end; });
        for (; it != laid.end() && it->start < section.end; ++it) {
            if (it->start > cursor)
                gaps.push_back(UnwindSpan{cursor, it->start, kind, 0, 0});
            cursor = std::max(cursor, it->end);
        }
        if (cursor < section.end)
            gaps.push_back(UnwindSpan{cursor, section.end, kind, 0, 0});
    }
    return gaps;
}

} // namespace

std::vector<UnwindRow> layOutUnwindRows(std::vector<UnwindSpan> spans, const std::vector<CodeSection> &sections,
                                        UnwindTableStats &stats)
{
    std::stable_sort(spans.begin(), spans.end(),
                     [](const UnwindSpan &a, const UnwindSpan &b) { return a.start < b.start; });
    std::vector<UnwindSpan> laid;
    laid.reserve(spans.size());
    for (UnwindSpan span : spans) {
        if (!laid.empty() && span.start < laid.back().end) {
            ++stats.overlaps;
            if (span.end <= laid.back().end)
                continue;
            span.start = laid.back().end;
        }
        if (agent::isFallback(span.kind) && inPlt(sections, span.start))
            span.kind = UnwindKind::Plt;
        laid.push_back(span);
    }
    std::vector<UnwindSpan> gaps = uncovered(laid, sections);
    laid.insert(laid.end(), gaps.begin(), gaps.end());
    std::sort(laid.begin(), laid.end(), [](const UnwindSpan &a, const UnwindSpan &b) { return a.start < b.start; });

    std::vector<UnwindRow> rows;
    uint64_t lastEnd = 0;
    for (const UnwindSpan &span : laid) {
        if (span.end > uint64_t(UINT32_MAX) + 1)
            continue;
        if (!rows.empty() && span.start > lastEnd)
            rows.push_back(UnwindRow{static_cast<uint32_t>(lastEnd), 0, UnwindKind::NoFde, 0});
        const UnwindRow row{static_cast<uint32_t>(span.start), span.cfaOffset, span.kind, span.rbpSlot};
        const UnwindRow *back = rows.empty() ? nullptr : &rows.back();
        if (!back || back->kind != row.kind || back->cfaOffset != row.cfaOffset || back->rbpSlot != row.rbpSlot)
            rows.push_back(row);
        lastEnd = span.end;
    }
    if (!rows.empty() && lastEnd <= UINT32_MAX)
        rows.push_back(UnwindRow{static_cast<uint32_t>(lastEnd), 0, UnwindKind::NoFde, 0});

    for (size_t i = 0; i + 1 < rows.size(); ++i) {
        const auto kind = static_cast<size_t>(rows[i].kind);
        const uint64_t begin = rows[i].start;
        const uint64_t end = rows[i + 1].start;
        ++stats.rows[kind];
        stats.bytes[kind] += end - begin;
        if (!walkable(rows[i].kind))
            continue;
        for (const CodeSection &section : sections) {
            const uint64_t low = std::max(begin, section.start);
            const uint64_t high = std::min(end, section.end);
            if (low < high)
                stats.coveredBytes += high - low;
        }
    }
    for (const CodeSection &section : sections)
        stats.executableBytes += section.end - section.start;
    return rows;
}

} // namespace emberline::engine
