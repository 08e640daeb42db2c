#include "app/report_command.h"

#include "engine/import/open_profile.h"
#include "engine/pprof/session_folder.h"
#include "engine/report/disasm_report.h"
#include "engine/report/folded_writer.h"
#include "engine/report/list_report.h"

#include <cstdio>
#include <filesystem>
#include <utility>

namespace emberline::app {
namespace {

// A file of any format, or a session folder merged from its flushes when its profile.pprof is missing or broken;
// what was left out is said on stderr, since the numbers then cover less than the whole session.
engine::Result<engine::Profile> readProfileOrFolder(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec))
        return engine::readProfileFile(path);
    auto folder = engine::readSessionFolder(path);
    if (!folder)
        return folder.error();
    if (folder->fromFlushes)
        std::fprintf(stderr, "emberline report: merged %zu flush file(s), since %s\n", folder->flushesMerged,
                     folder->sessionProfileProblem.c_str());
    for (const std::string &skipped : folder->skipped)
        std::fprintf(stderr, "emberline report: skipped %s\n", skipped.c_str());
    return std::move(folder->profile);
}

// The profile at `path` with the request's transforms applied.
engine::Result<engine::Profile> loadTransformed(const std::string &path, const ReportRequest &r)
{
    auto profile = readProfileOrFolder(path);
    if (!profile || r.transforms.empty())
        return profile;
    return engine::applyTransforms(profile.value(), r.transforms);
}

// The report asked for; a comparison takes the profile over.
engine::Result<std::string> buildOutput(engine::Profile profile, const ReportRequest &r)
{
    if (r.list) {
        engine::ListOptions list;
        list.pattern = r.listPattern;
        list.sampleType = r.options.sampleType;
        list.json = r.options.json;
        list.sourceRoots = r.sourceRoots;
        return engine::buildListReport(profile, list);
    }
    if (r.disasm) {
        engine::DisasmOptions disasm;
        disasm.pattern = r.disasmPattern;
        disasm.sampleType = r.options.sampleType;
        disasm.json = r.options.json;
        disasm.sourceRoots = r.sourceRoots;
        if (!r.debugDirectories.empty())
            disasm.debugDirectories = r.debugDirectories;
        return engine::buildDisasmReport(profile, disasm);
    }
    if (r.format == QLatin1String("folded"))
        return engine::writeFoldedStacks(profile, r.options.sampleType);
    if (r.base.empty())
        return engine::buildReport(profile, r.options);
    auto base = loadTransformed(r.base, r);
    if (!base)
        return engine::makeError(base.error().code, "base: " + base.error().message);
    engine::ReportOptions options = r.options;
    options.baseFileName = r.base;
    return engine::buildDiffReport(std::move(profile), std::move(base).value(), options);
}

} // namespace

int runReportRequest(const ReportRequest &request)
{
    auto profile = loadTransformed(request.file, request);
    if (!profile) {
        std::fprintf(stderr, "emberline report: %s\n", profile.error().message.c_str());
        return 1;
    }
    auto output = buildOutput(std::move(profile).value(), request);
    if (!output) {
        std::fprintf(stderr, "emberline report: %s\n", output.error().message.c_str());
        return 1;
    }
    std::fputs(output.value().c_str(), stdout);
    return 0;
}

} // namespace emberline::app
