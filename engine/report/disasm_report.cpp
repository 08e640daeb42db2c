#include "engine/report/disasm_report.h"

#include "engine/annotate/disassembly.h"
#include "engine/annotate/source_locator.h"
#include "engine/common/strings.h"
#include "engine/model/units.h"
#include "engine/report/report_common.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <map>

namespace emberline::engine {
namespace {

// Without "0x": the listing's address column, as objdump prints it.
std::string plainHex(uint64_t address)
{
    char text[24];
    std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(address));
    return text;
}

// An instruction's bytes as objdump shows them: "48 89 e5".
std::string spacedHexBytes(const std::vector<uint8_t> &bytes)
{
    std::string text;
    char cell[4];
    for (uint8_t b : bytes) {
        std::snprintf(cell, sizeof cell, "%02x", b);
        text += (text.empty() ? "" : " ") + std::string(cell);
    }
    return text;
}

// Source files read once per report; a file not found shows its line numbers alone.
class SourceCache {
public:
    explicit SourceCache(const std::vector<std::string> &roots) : m_locator(roots) {}
    std::string line(const std::string &file, int64_t number)
    {
        auto it = m_files.find(file);
        if (it == m_files.end()) {
            auto loaded = m_locator.load(file);
            it = m_files.emplace(file, loaded ? std::move(loaded).value().lines : std::vector<std::string>{}).first;
        }
        const auto &lines = it->second;
        return number >= 1 && number <= static_cast<int64_t>(lines.size()) ? lines[static_cast<size_t>(number - 1)]
                                                                           : std::string();
    }

private:
    SourceLocator m_locator;
    std::map<std::string, std::vector<std::string>> m_files;
};

void appendFunction(std::string &out, const FunctionDisassembly &fn, int64_t grandTotal, const std::string &unit,
                    SourceCache &sources)
{
    out += "ROUTINE ======================== " + fn.name + " in " + (fn.binary.empty() ? fn.file : fn.binary) + "\n";
    out += costRow(fn.self, fn.total, unit) + "(self, total) " + formatPercent(fn.total, grandTotal) + " of Total\n";
    if (!fn.buildId.empty() && !fn.binary.empty())
        out += "  build id " + fn.buildId + ", found at the " + fn.origin + "\n";
    for (const std::string &note : fn.notes)
        out += "  note: " + note + "\n";
    if (!fn.error.empty()) {
        out += "  not disassembled: " + fn.error + "\n";
        return;
    }
    const std::string blank(22, ' '); // under the cost columns
    std::string file;
    int64_t line = -1;
    for (const AnnotatedInstruction &insn : fn.instructions) {
        if (insn.file != file || insn.line != line) {
            file = insn.file;
            line = insn.line;
            if (line > 0)
                out += blank + baseName(file) + ":" + std::to_string(line) + "  " + sources.line(file, line) + "\n";
        }
        char address[32];
        std::snprintf(address, sizeof address, "%10s: ", plainHex(insn.address).c_str());
        std::string bytes = spacedHexBytes(insn.bytes);
        bytes.resize(std::max<size_t>(bytes.size(), 29), ' ');
        out += costRow(insn.self, insn.total, unit) + address + bytes + " " + insn.text + "\n";
    }
}

std::string textReport(const std::vector<FunctionDisassembly> &functions, int64_t grandTotal, const std::string &unit,
                       const DisasmOptions &options)
{
    SourceCache sources(options.sourceRoots);
    std::string out = "Total: " + formatValue(grandTotal, unit) + "\n";
    for (const FunctionDisassembly &fn : functions)
        appendFunction(out, fn, grandTotal, unit, sources);
    return out;
}

QJsonObject jsonFunction(const FunctionDisassembly &fn)
{
    QJsonObject f;
    f.insert(QStringLiteral("name"), QString::fromStdString(fn.name));
    f.insert(QStringLiteral("file"), QString::fromStdString(fn.file));
    f.insert(QStringLiteral("binary"), QString::fromStdString(fn.binary));
    f.insert(QStringLiteral("build_id"), QString::fromStdString(fn.buildId));
    f.insert(QStringLiteral("self"), static_cast<qint64>(fn.self));
    f.insert(QStringLiteral("total"), static_cast<qint64>(fn.total));
    QJsonArray notes;
    for (const std::string &note : fn.notes)
        notes.append(QString::fromStdString(note));
    f.insert(QStringLiteral("notes"), notes);
    if (!fn.error.empty())
        f.insert(QStringLiteral("error"), QString::fromStdString(fn.error));
    QJsonArray instructions;
    for (const AnnotatedInstruction &insn : fn.instructions) {
        QJsonObject i;
        i.insert(QStringLiteral("address"), QString::fromStdString(hexAddress(insn.address)));
        i.insert(QStringLiteral("bytes"), QString::fromStdString(spacedHexBytes(insn.bytes)));
        i.insert(QStringLiteral("text"), QString::fromStdString(insn.text));
        i.insert(QStringLiteral("file"), QString::fromStdString(insn.file));
        i.insert(QStringLiteral("line"), static_cast<qint64>(insn.line));
        i.insert(QStringLiteral("self"), static_cast<qint64>(insn.self));
        i.insert(QStringLiteral("total"), static_cast<qint64>(insn.total));
        instructions.append(i);
    }
    f.insert(QStringLiteral("instructions"), instructions);
    return f;
}

std::string jsonReport(const std::vector<FunctionDisassembly> &functions, const Profile &p, int typeIndex)
{
    QJsonArray array;
    for (const FunctionDisassembly &fn : functions)
        array.append(jsonFunction(fn));
    return functionsJson(p, typeIndex, array);
}

} // namespace

Result<std::string> buildDisasmReport(const Profile &profile, const DisasmOptions &options)
{
    auto selection = selectFunctions(profile, "--disasm", options.pattern, options.sampleType);
    if (!selection)
        return selection.error();
    const FunctionSelection &selected = selection.value();
    DisassemblyRequest request;
    request.matches = [&](const std::string &name) { return selected.matches(name); };
    request.sampleType = selected.typeIndex;
    request.debugDirectories = options.debugDirectories;
    auto functions = disassembleFunctions(profile, selected.perStack, request);
    if (!functions) {
        if (functions.error().code == Error::Code::Invalid)
            return makeError(Error::Code::Invalid,
                             "--disasm: no function with an instruction address matches '" + options.pattern + "'");
        return makeError(functions.error().code, "--disasm: " + functions.error().message);
    }
    const bool anyListed = std::any_of(functions->begin(), functions->end(),
                                       [](const FunctionDisassembly &fn) { return fn.error.empty(); });
    if (!anyListed) {
        std::string message = "--disasm: no matching function could be disassembled:";
        for (const FunctionDisassembly &fn : functions.value())
            message += "\n  " + fn.name + ": " + fn.error;
        return makeError(Error::Code::Io, message);
    }
    if (options.json)
        return jsonReport(functions.value(), profile, selected.typeIndex);
    return textReport(functions.value(), selected.grandTotal, selected.unit, options);
}

} // namespace emberline::engine
