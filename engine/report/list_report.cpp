#include "engine/report/list_report.h"

#include "engine/analysis/line_table.h"
#include "engine/annotate/source_locator.h"
#include "engine/model/units.h"
#include "engine/report/report_common.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>

namespace emberline::engine {
namespace {

// Lines of context shown around the costly ones, as pprof shows them.
constexpr int64_t kMargin = 5;

std::string lineNumber(int64_t line)
{
    char cell[32];
    std::snprintf(cell, sizeof cell, "%6lld:", static_cast<long long>(line));
    return cell;
}

// The listing of one function with its source: from its start line (or the first costly line less a margin) to
// the last costly line plus a margin, and every costly line past the file's end said so.
void appendWithSource(std::string &out, const FunctionLines &fn, const SourceFile &source, const std::string &unit)
{
    const int64_t fileLines = static_cast<int64_t>(source.lines.size());
    const int64_t firstCostly = fn.lines.front().line;
    const int64_t lastCostly = fn.lines.back().line;
    int64_t first = fn.startLine > 0 && fn.startLine <= firstCostly ? fn.startLine : firstCostly - kMargin;
    first = std::max<int64_t>(first, 1);
    const int64_t last = std::min(lastCostly + kMargin, fileLines);
    auto cost = fn.lines.begin();
    for (int64_t n = first; n <= last; ++n) {
        while (cost != fn.lines.end() && cost->line < n)
            ++cost;
        const bool costly = cost != fn.lines.end() && cost->line == n;
        out += costRow(costly ? cost->self : 0, costly ? cost->total : 0, unit) + lineNumber(n) +
               source.lines[static_cast<size_t>(n - 1)] + "\n";
    }
    for (const LineCost &l : fn.lines) {
        if (l.line > fileLines || l.line < 1)
            out += costRow(l.self, l.total, unit) + lineNumber(l.line) + " (not in " + source.path + ", which has " +
                   std::to_string(fileLines) + " lines: the file changed since the recording?)\n";
    }
}

std::string textList(const std::vector<FunctionLines> &functions, int64_t grandTotal, const std::string &unit,
                     const ListOptions &o)
{
    const SourceLocator locator(o.sourceRoots);
    std::string out = "Total: " + formatValue(grandTotal, unit) + "\n";
    for (const FunctionLines &fn : functions) {
        out += "ROUTINE ======================== " + fn.name + " in " + fn.file + "\n";
        out +=
            costRow(fn.self, fn.total, unit) + "(self, total) " + formatPercent(fn.total, grandTotal) + " of Total\n";
        auto source = locator.load(fn.file);
        if (source) {
            appendWithSource(out, fn, source.value(), unit);
            continue;
        }
        out += " Source " + source.error().message + "; costly lines only:\n";
        for (const LineCost &l : fn.lines)
            out += costRow(l.self, l.total, unit) + lineNumber(l.line) + "\n";
    }
    return out;
}

std::string jsonList(const std::vector<FunctionLines> &functions, const Profile &p, int typeIndex)
{
    QJsonArray array;
    for (const FunctionLines &fn : functions) {
        QJsonObject f;
        f.insert(QStringLiteral("name"), QString::fromStdString(fn.name));
        f.insert(QStringLiteral("file"), QString::fromStdString(fn.file));
        f.insert(QStringLiteral("self"), static_cast<qint64>(fn.self));
        f.insert(QStringLiteral("total"), static_cast<qint64>(fn.total));
        QJsonArray lines;
        for (const LineCost &l : fn.lines) {
            QJsonObject line;
            line.insert(QStringLiteral("line"), static_cast<qint64>(l.line));
            line.insert(QStringLiteral("self"), static_cast<qint64>(l.self));
            line.insert(QStringLiteral("total"), static_cast<qint64>(l.total));
            lines.append(line);
        }
        f.insert(QStringLiteral("lines"), lines);
        array.append(f);
    }
    return functionsJson(p, typeIndex, array);
}

} // namespace

Result<std::string> buildListReport(const Profile &profile, const ListOptions &options)
{
    auto selection = selectFunctions(profile, "--list", options.pattern, options.sampleType);
    if (!selection)
        return selection.error();
    const FunctionSelection &selected = selection.value();
    auto functions =
        LineTable::build(profile, selected.perStack, [&](const std::string &name) { return selected.matches(name); });
    if (!functions)
        return makeError(Error::Code::Cancelled, "cancelled");
    if (functions->empty())
        return makeError(Error::Code::Invalid, "--list: no function with a cost matches '" + options.pattern + "'");
    if (options.json)
        return jsonList(functions.value(), profile, selected.typeIndex);
    return textList(functions.value(), selected.grandTotal, selected.unit, options);
}

} // namespace emberline::engine
