#include "engine/annotate/disassembly.h"

#include "engine/analysis/valued_stacks.h"
#include "engine/annotate/code_locator.h"
#include "engine/annotate/code_module.h"
#include "engine/annotate/debuginfod_client.h"
#include "engine/annotate/disassembler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

namespace emberline::engine {
namespace {

std::string hex(uint64_t value)
{
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return text;
}

// A mapping's file opened once, or why it could not be.
struct OpenedMapping {
    std::unique_ptr<CodeModule> module;
    LocatedCode located;
    std::string error;
};

// Where a location's address lies: which listed function, which of its instructions.
struct Placement {
    uint32_t function = kNoIndex;
    uint32_t instruction = kNoIndex;
};

class Annotator {
public:
    Annotator(const Profile &profile, std::span<const int64_t> perStack, const DisassemblyRequest &request,
              const std::atomic<bool> *cancel)
        : m_profile(profile), m_perStack(perStack), m_request(request), m_cancel(cancel),
          m_locator(request.debugDirectories, request.useDebuginfod ? &m_debuginfod : nullptr)
    {
    }

    Result<std::vector<FunctionDisassembly>> run()
    {
        if (!hasAddresses())
            return makeError(Error::Code::Unsupported,
                             "the profile has no instruction addresses in mapped files (it was not recorded with "
                             "addresses and build ids, or was imported from text): nothing to disassemble");
        placeLocations();
        if (m_functions.empty())
            return makeError(Error::Code::Invalid, "no function with an instruction address matches");
        if (!sumFunctions())
            return makeError(Error::Code::Cancelled, "cancelled");
        keepCostliest();
        for (FunctionDisassembly &fn : m_functions)
            decode(fn);
        if (!sumInstructions())
            return makeError(Error::Code::Cancelled, "cancelled");
        return std::move(m_functions);
    }

private:
    bool hasAddresses() const
    {
        return std::any_of(m_profile.locations().begin(), m_profile.locations().end(), [&](const Location &loc) {
            return loc.address != 0 && loc.mappingIndex < m_profile.mappings().size();
        });
    }

    std::string functionName(const Location &loc) const
    {
        if (loc.lines.empty() || loc.lines.back().functionIndex >= m_profile.functions().size())
            return {};
        const Function &fn = m_profile.functions()[loc.lines.back().functionIndex];
        return m_profile.str(fn.name).empty() ? m_profile.str(fn.systemName) : m_profile.str(fn.name);
    }

    // Opened once per file: a binary's code and data segments are separate mappings of it.
    OpenedMapping &opened(uint32_t mappingIndex)
    {
        const Mapping &mapping = m_profile.mappings()[mappingIndex];
        auto [it, inserted] =
            m_opened.try_emplace(m_profile.str(mapping.filename) + '\n' + m_profile.str(mapping.buildId));
        if (!inserted)
            return it->second;
        auto located = m_locator.locate(m_profile.str(mapping.filename), m_profile.str(mapping.buildId));
        if (!located) {
            it->second.error = located.error().message;
            return it->second;
        }
        it->second.located = std::move(located).value();
        auto module = CodeModule::open(it->second.located.path, m_request.debugDirectories,
                                       m_request.useDebuginfod ? &m_debuginfod : nullptr);
        if (!module)
            it->second.error = module.error().message;
        else
            it->second.module = std::move(module).value();
        return it->second;
    }

    // Every matching location to its function, opening each mapping's file once. A file that cannot be used
    // gives one entry per function name with its error.
    void placeLocations()
    {
        const auto &locations = m_profile.locations();
        m_placements.assign(locations.size(), Placement{});
        std::map<std::pair<uint32_t, uint64_t>, uint32_t> byRange;      // (mapping, start) -> function
        std::map<std::pair<uint32_t, std::string>, uint32_t> byFailure; // (mapping, name) -> function
        for (uint32_t i = 0; i < locations.size(); ++i) {
            const Location &loc = locations[i];
            if (loc.address == 0 || loc.mappingIndex >= m_profile.mappings().size())
                continue;
            const std::string name = functionName(loc);
            if (name.empty() || !m_request.matches(name))
                continue;
            const Mapping &mapping = m_profile.mappings()[loc.mappingIndex];
            OpenedMapping &file = opened(loc.mappingIndex);
            std::optional<CodeModule::Range> range;
            std::string failure = file.error;
            if (file.module) {
                const auto address = file.module->addressOfFileOffset(loc.address - mapping.start + mapping.offset);
                range = address ? file.module->functionAt(*address) : std::nullopt;
                if (!range)
                    failure = "no symbol or debug information in " + file.module->path() +
                              " gives the extent of the function at file offset " +
                              hex(loc.address - mapping.start + mapping.offset);
            }
            if (range) {
                auto [it, inserted] =
                    byRange.try_emplace({loc.mappingIndex, range->start}, static_cast<uint32_t>(m_functions.size()));
                if (inserted)
                    m_functions.push_back(newFunction(loc, name, file, *range));
                m_placements[i].function = it->second;
                continue;
            }
            auto [it, inserted] =
                byFailure.try_emplace({loc.mappingIndex, name}, static_cast<uint32_t>(m_functions.size()));
            if (inserted) {
                FunctionDisassembly fn = newFunction(loc, name, file, {});
                fn.error = failure;
                m_functions.push_back(std::move(fn));
            }
            m_placements[i].function = it->second;
        }
    }

    FunctionDisassembly newFunction(const Location &loc, const std::string &name, const OpenedMapping &file,
                                    const CodeModule::Range &range) const
    {
        FunctionDisassembly fn;
        fn.name = name;
        const Function &profiled = m_profile.functions()[loc.lines.back().functionIndex];
        fn.file = m_profile.str(profiled.filename);
        fn.buildId = m_profile.str(m_profile.mappings()[loc.mappingIndex].buildId);
        fn.binary = file.located.path;
        fn.origin = file.located.origin;
        fn.notes = file.located.notes;
        fn.start = range.start;
        fn.end = range.end;
        if (file.module) {
            fn.buildId = file.module->buildId();
            const std::string debugFile = file.module->debugFile();
            if (!debugFile.empty())
                fn.notes.push_back("symbols and lines from " + debugFile);
        }
        return fn;
    }

    // Self and total per function, each sample counted once in a function's total.
    bool sumFunctions()
    {
        std::vector<uint32_t> seen(m_functions.size(), kNoIndex);
        return forEachValuedStack(m_perStack, m_cancel, [&](uint32_t s, int64_t value) {
            bool leaf = true;
            for (uint32_t loc : m_profile.stacks().stack(s)) {
                const uint32_t f = m_placements[loc].function;
                if (f != kNoIndex) {
                    if (leaf)
                        m_functions[f].self += value;
                    if (seen[f] != s) {
                        seen[f] = s;
                        m_functions[f].total += value;
                    }
                }
                leaf = false;
            }
        });
    }

    // The costliest functions only; placements are renumbered to the kept order.
    void keepCostliest()
    {
        std::vector<uint32_t> order(m_functions.size());
        for (uint32_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            return m_functions[a].total != m_functions[b].total ? m_functions[a].total > m_functions[b].total
                                                                : m_functions[a].name < m_functions[b].name;
        });
        if (order.size() > m_request.maxFunctions)
            order.resize(m_request.maxFunctions);
        std::vector<uint32_t> newIndex(m_functions.size(), kNoIndex);
        std::vector<FunctionDisassembly> kept;
        for (uint32_t i = 0; i < order.size(); ++i) {
            newIndex[order[i]] = i;
            kept.push_back(std::move(m_functions[order[i]]));
        }
        m_functions = std::move(kept);
        for (Placement &p : m_placements)
            p.function = p.function == kNoIndex ? kNoIndex : newIndex[p.function];
    }

    CodeModule *moduleOf(const FunctionDisassembly &fn)
    {
        for (auto &[key, file] : m_opened) {
            if (file.module && file.located.path == fn.binary)
                return file.module.get();
        }
        return nullptr;
    }

    void decode(FunctionDisassembly &fn)
    {
        if (!fn.error.empty())
            return;
        CodeModule *module = moduleOf(fn);
        if (module == nullptr) {
            fn.error = "internal: the function's module is not open";
            return;
        }
        auto bytes = module->code(fn.start, fn.end);
        if (!bytes) {
            fn.error = bytes.error().message;
            return;
        }
        auto decoded = decodeInstructions(module->machine(), module->is64Bit(), bytes.value(), fn.start);
        if (!decoded) {
            fn.error = decoded.error().message;
            return;
        }
        fn.instructions.reserve(decoded->size());
        for (DecodedInstruction &d : decoded.value()) {
            AnnotatedInstruction insn;
            insn.address = d.address;
            insn.bytes = std::move(d.bytes);
            insn.text = std::move(d.text);
            CodeModule::SourceLine line = module->lineAt(d.address);
            insn.file = std::move(line.file);
            insn.line = line.line;
            fn.instructions.push_back(std::move(insn));
        }
    }

    // Each location of a listed function to the instruction that holds its address.
    void placeInstructions()
    {
        std::vector<int64_t> unplaced(m_functions.size(), 0);
        for (uint32_t i = 0; i < m_placements.size(); ++i) {
            Placement &p = m_placements[i];
            if (p.function == kNoIndex)
                continue;
            FunctionDisassembly &fn = m_functions[p.function];
            if (fn.instructions.empty())
                continue;
            const Location &loc = m_profile.locations()[i];
            const Mapping &mapping = m_profile.mappings()[loc.mappingIndex];
            const CodeModule *module = moduleOf(fn);
            const auto address = module->addressOfFileOffset(loc.address - mapping.start + mapping.offset);
            const auto &insns = fn.instructions;
            auto it = std::upper_bound(insns.begin(), insns.end(), address.value_or(0),
                                       [](uint64_t a, const AnnotatedInstruction &insn) { return a < insn.address; });
            if (address && it != insns.begin() && *address - std::prev(it)->address < std::prev(it)->bytes.size())
                p.instruction = static_cast<uint32_t>(std::prev(it) - insns.begin());
            else
                ++unplaced[p.function];
        }
        for (size_t f = 0; f < m_functions.size(); ++f) {
            if (unplaced[f] > 0)
                m_functions[f].notes.push_back(std::to_string(unplaced[f]) +
                                               " address(es) fell on no instruction boundary of the listing");
        }
    }

    bool sumInstructions()
    {
        placeInstructions();
        std::vector<std::vector<uint32_t>> seen(m_functions.size());
        for (size_t f = 0; f < m_functions.size(); ++f)
            seen[f].assign(m_functions[f].instructions.size(), kNoIndex);
        return forEachValuedStack(m_perStack, m_cancel, [&](uint32_t s, int64_t value) {
            bool leaf = true;
            for (uint32_t loc : m_profile.stacks().stack(s)) {
                const Placement p = m_placements[loc];
                if (p.function != kNoIndex && p.instruction != kNoIndex) {
                    AnnotatedInstruction &insn = m_functions[p.function].instructions[p.instruction];
                    if (leaf)
                        insn.self += value;
                    if (seen[p.function][p.instruction] != s) {
                        seen[p.function][p.instruction] = s;
                        insn.total += value;
                    }
                }
                leaf = false;
            }
        });
    }

    const Profile &m_profile;
    std::span<const int64_t> m_perStack;
    const DisassemblyRequest &m_request;
    const std::atomic<bool> *m_cancel;
    DebuginfodClient m_debuginfod;
    CodeLocator m_locator;
    std::map<std::string, OpenedMapping> m_opened; // by path '\n' build id
    std::vector<Placement> m_placements;           // by location index
    std::vector<FunctionDisassembly> m_functions;
};

} // namespace

Result<std::vector<FunctionDisassembly>> disassembleFunctions(const Profile &profile, std::span<const int64_t> perStack,
                                                              const DisassemblyRequest &request,
                                                              const std::atomic<bool> *cancel)
{
    if (!request.matches)
        return makeError(Error::Code::Invalid, "no function to disassemble was named");
    Annotator annotator(profile, perStack, request, cancel);
    return annotator.run();
}

} // namespace emberline::engine
