#include "engine/annotate/code_locator.h"

#include "engine/annotate/debuginfod_client.h"
#include "engine/common/strings.h"
#include "engine/symbols/symbol_module.h"

#include <filesystem>

namespace emberline::engine {
namespace {

bool exists(const std::string &path)
{
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

std::string joined(const std::vector<std::string> &notes)
{
    std::string text;
    for (const std::string &note : notes)
        text += (text.empty() ? "" : "; ") + note;
    return text;
}

} // namespace

Result<LocatedCode> CodeLocator::locate(const std::string &recordedPath, const std::string &rawBuildId) const
{
    const std::string buildId = lowercaseHex(rawBuildId);
    LocatedCode found;
    // "[kernel.kallsyms]", "[vdso]", "[anon]", "[jit]": pseudo-files the recorder names; no ELF file to read.
    if (!recordedPath.empty() && recordedPath.front() == '[')
        return makeError(Error::Code::Unsupported,
                         recordedPath + " is kernel, vdso or anonymous code: only code from ELF files is disassembled");
    if (buildId.empty()) {
        if (!recordedPath.empty() && exists(recordedPath)) {
            found.path = recordedPath;
            found.origin = "recorded path";
            found.notes.push_back("the recording has no build id for " + recordedPath +
                                  ": the file could not be checked against it");
            return found;
        }
        return makeError(Error::Code::Io,
                         (recordedPath.empty() ? std::string("no file recorded") : recordedPath + ": not found") +
                             ", and without a build id it cannot be looked up elsewhere");
    }

    if (recordedPath.empty()) {
        found.notes.push_back("no file recorded");
    } else if (!exists(recordedPath)) {
        found.notes.push_back(recordedPath + ": not found");
    } else {
        const std::string actual = readElfBuildId(recordedPath);
        if (actual == buildId) {
            found.path = recordedPath;
            found.origin = "recorded path";
            return found;
        }
        found.notes.push_back(recordedPath + " has build id " + (actual.empty() ? std::string("(none)") : actual) +
                              ", the recording has " + buildId + ": refused, it is not the file that ran");
    }

    if (buildId.size() > 2) {
        for (const std::string &directory : m_debugDirectories) {
            const std::string candidate = directory + "/.build-id/" + buildId.substr(0, 2) + "/" + buildId.substr(2);
            if (exists(candidate) && readElfBuildId(candidate) == buildId) {
                found.path = candidate;
                found.origin = "debug directory";
                return found;
            }
        }
    }

    if (m_debuginfod != nullptr && DebuginfodClient::configured()) {
        auto fetched = m_debuginfod->findExecutable(buildId);
        if (fetched && readElfBuildId(fetched.value()) == buildId) {
            found.path = fetched.value();
            found.origin = "debuginfod";
            return found;
        }
        found.notes.push_back(fetched ? fetched.value() + ": debuginfod served a file of another build id"
                                      : fetched.error().message);
    } else {
        found.notes.push_back("debuginfod not asked (DEBUGINFOD_URLS is not set)");
    }
    return makeError(Error::Code::Io, "no file with build id " + buildId + ": " + joined(found.notes));
}

} // namespace emberline::engine
