#include "engine/report/report.h"

#include "engine/analysis/function_table.h"
#include "engine/compare/comparison.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "engine/model/units.h"
#include "engine/report/sample_type.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace emberline::engine {
namespace {

std::string textReport(const Profile &p, const FrameTable &frames, const FunctionTable &table, int typeIndex,
                       const ReportOptions &o)
{
    const std::string &unit = p.str(p.sampleTypes()[typeIndex].unit);
    std::string out;
    if (!o.fileName.empty())
        out += "File: " + o.fileName + "\n";
    out += "Type: " + p.str(p.sampleTypes()[typeIndex].type) + " (" + unit + ")\n";
    if (p.durationNanos > 0)
        out += "Duration: " + formatValue(p.durationNanos, "nanoseconds") + "\n";
    out += "Samples: " + std::to_string(p.sampleCount()) + ", total " + formatValue(table.grandTotal(), unit) + "\n";
    const auto &rows = table.rows();
    const size_t n = o.top > 0 ? std::min<size_t>(rows.size(), static_cast<size_t>(o.top)) : rows.size();
    out += "Showing " + std::to_string(n) + " of " + std::to_string(rows.size()) + " functions\n";
    char line[256];
    std::snprintf(line, sizeof line, "%12s %8s %8s %12s %8s  %s\n", "self", "self%", "sum%", "total", "total%",
                  "function");
    out += line;
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto &r = rows[i];
        sum += r.self;
        std::snprintf(line, sizeof line, "%12s %8s %8s %12s %8s  ", formatValue(r.self, unit).c_str(),
                      formatPercent(r.self, table.grandTotal()).c_str(), formatPercent(sum, table.grandTotal()).c_str(),
                      formatValue(r.total, unit).c_str(), formatPercent(r.total, table.grandTotal()).c_str());
        out += line;
        out += frames.frame(r.frame).name + "\n";
    }
    return out;
}

// Every sample type with its unit and total: {"type","unit","total"}.
QJsonArray sampleTypesJson(const Profile &p)
{
    QJsonArray types;
    const std::vector<int64_t> totals = p.totals();
    for (size_t i = 0; i < p.sampleTypes().size(); ++i) {
        QJsonObject t;
        t.insert(QStringLiteral("type"), QString::fromStdString(p.str(p.sampleTypes()[i].type)));
        t.insert(QStringLiteral("unit"), QString::fromStdString(p.str(p.sampleTypes()[i].unit)));
        t.insert(QStringLiteral("total"), static_cast<qint64>(totals[i]));
        types.append(t);
    }
    return types;
}

std::string jsonReport(const Profile &p, const FrameTable &frames, const FunctionTable &table, const ReportOptions &o)
{
    QJsonObject root;
    root.insert(QStringLiteral("sample_types"), sampleTypesJson(p));
    root.insert(QStringLiteral("samples"), static_cast<qint64>(p.sampleCount()));
    QJsonArray functions;
    const auto &rows = table.rows();
    const size_t n = o.top > 0 ? std::min<size_t>(rows.size(), static_cast<size_t>(o.top)) : rows.size();
    for (size_t i = 0; i < n; ++i) {
        QJsonObject f;
        f.insert(QStringLiteral("name"), QString::fromStdString(frames.frame(rows[i].frame).name));
        f.insert(QStringLiteral("self"), static_cast<qint64>(rows[i].self));
        f.insert(QStringLiteral("total"), static_cast<qint64>(rows[i].total));
        functions.append(f);
    }
    root.insert(QStringLiteral("functions"), functions);
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

std::string signedValue(int64_t v, const std::string &unit)
{
    return (v > 0 ? "+" : v < 0 ? "-" : "") + formatValue(v < 0 ? -v : v, unit);
}

std::string textDiffReport(const Comparison &c, const std::vector<const DiffFunction *> &changed,
                           const ReportOptions &o)
{
    std::string out;
    if (!o.fileName.empty())
        out += "File: " + o.fileName + "\n";
    if (!o.baseFileName.empty())
        out += "Base: " + o.baseFileName + "\n";
    out += "Type: " + c.sampleType + " (" + c.unit + ")\n";
    out += "Total: new " + formatValue(c.newTotal, c.unit) + ", base " + formatValue(c.baseTotal, c.unit);
    if (c.baseScale != 1.0) {
        char scale[64];
        std::snprintf(scale, sizeof scale, " (scaled by %.6g from %s)", c.baseScale,
                      formatValue(c.baseRawTotal, c.unit).c_str());
        out += scale;
    }
    out += ", change " + signedValue(c.newTotal - c.baseTotal, c.unit) + "\n";
    const size_t n = o.top > 0 ? std::min<size_t>(changed.size(), static_cast<size_t>(o.top)) : changed.size();
    if (changed.empty())
        return out + "No function changed.\n";
    out += "Showing " + std::to_string(n) + " of " + std::to_string(changed.size()) + " functions that changed\n";
    char line[320];
    std::snprintf(line, sizeof line, "%12s %8s %12s %12s %12s %12s  %s\n", "self", "self%", "base self", "total",
                  "base total", "new total", "function");
    out += line;
    for (size_t i = 0; i < n; ++i) {
        const DiffFunction &f = *changed[i];
        const std::string share = f.baseSelf != 0       ? formatPercent(f.selfChange(), std::llabs(f.baseSelf))
                                  : f.selfChange() != 0 ? "new"
                                                        : "";
        std::snprintf(line, sizeof line, "%12s %8s %12s %12s %12s %12s  ", signedValue(f.selfChange(), c.unit).c_str(),
                      share.c_str(), formatValue(f.baseSelf, c.unit).c_str(),
                      signedValue(f.totalChange(), c.unit).c_str(), formatValue(f.baseTotal, c.unit).c_str(),
                      formatValue(f.newTotal, c.unit).c_str());
        out += line;
        out += c.frames->frame(f.frame).name + "\n";
    }
    return out;
}

std::string jsonDiffReport(const Comparison &c, const std::vector<const DiffFunction *> &changed,
                           const ReportOptions &o)
{
    const Profile &next = *c.request.next->profile;
    QJsonObject root;
    root.insert(QStringLiteral("sample_types"), sampleTypesJson(next));
    root.insert(QStringLiteral("samples"), static_cast<qint64>(next.sampleCount()));
    QJsonObject base;
    base.insert(QStringLiteral("file"), QString::fromStdString(o.baseFileName));
    base.insert(QStringLiteral("type"), QString::fromStdString(c.sampleType));
    base.insert(QStringLiteral("total"), static_cast<qint64>(c.baseTotal));
    base.insert(QStringLiteral("scale"), c.baseScale);
    root.insert(QStringLiteral("base"), base);
    QJsonArray functions;
    const size_t n = o.top > 0 ? std::min<size_t>(changed.size(), static_cast<size_t>(o.top)) : changed.size();
    for (size_t i = 0; i < n; ++i) {
        const DiffFunction &f = *changed[i];
        QJsonObject j;
        j.insert(QStringLiteral("name"), QString::fromStdString(c.frames->frame(f.frame).name));
        j.insert(QStringLiteral("self"), static_cast<qint64>(f.selfChange()));
        j.insert(QStringLiteral("total"), static_cast<qint64>(f.totalChange()));
        j.insert(QStringLiteral("base_self"), static_cast<qint64>(f.baseSelf));
        j.insert(QStringLiteral("base_total"), static_cast<qint64>(f.baseTotal));
        functions.append(j);
    }
    root.insert(QStringLiteral("functions"), functions);
    return QJsonDocument(root).toJson(QJsonDocument::Indented).toStdString();
}

} // namespace

Result<std::string> buildDiffReport(Profile next, Profile base, const ReportOptions &options)
{
    ComparisonRequest request;
    request.next = makeLoadedProfile(std::move(next));
    request.base = makeLoadedProfile(std::move(base));
    request.sampleType = options.sampleType;
    request.normalize = options.normalize;
    request.functionsOnly = true;
    auto comparison = compareProfiles(request);
    if (!comparison)
        return comparison.error();
    const Comparison &c = *comparison.value();
    // The window shows an empty base as all growth, with a notice; a report asked to normalize it says no.
    if (options.normalize && c.baseRawTotal == 0)
        return makeError(Error::Code::Invalid, "the base profile's " + c.sampleType +
                                                   " total is 0: it cannot be normalized to the new profile");
    // The comparison's rows are already in the report's order; a function whose values are equal did not change.
    std::vector<const DiffFunction *> changed;
    for (const DiffFunction &f : c.functions) {
        if (f.selfChange() != 0 || f.totalChange() != 0)
            changed.push_back(&f);
    }
    return options.json ? jsonDiffReport(c, changed, options) : textDiffReport(c, changed, options);
}

Result<std::string> buildReport(const Profile &profile, const ReportOptions &options)
{
    auto resolved = resolveSampleType(profile, options.sampleType);
    if (!resolved)
        return resolved.error();
    const int typeIndex = resolved.value();
    const FrameTable frames(profile);
    const std::vector<int64_t> perStack = valuesPerStack(profile, typeIndex, {});
    std::optional<FunctionTable> table = FunctionTable::build(profile, frames, perStack);
    if (!table)
        return makeError(Error::Code::Cancelled, "cancelled");
    return options.json ? jsonReport(profile, frames, *table, options)
                        : textReport(profile, frames, *table, typeIndex, options);
}

} // namespace emberline::engine
