#include "engine/upload/code_provenance.h"

#include "engine/common/strings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

namespace emberline::engine {
namespace {

bool isSharedObject(const std::string &name)
{
    static const std::regex so(R"(.*\.so(\.[0-9.]+)?$)");
    return std::regex_match(name, so);
}

bool isRuntimeLibrary(const std::string &name)
{
    static const std::regex runtime(
        R"(^(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libutil|libresolv|libatomic|libmvec|ld-linux.*|ld64|linux-vdso.*)\.so.*$)");
    return name == "[vdso]" || name == "[vsyscall]" || std::regex_match(name, runtime);
}

// "libfoo.so.1.2.3" -> ("libfoo", "1.2.3"); "libfoo-2.1.so" -> ("libfoo-2.1", "").
std::pair<std::string, std::string> sonameParts(const std::string &name)
{
    const size_t so = name.find(".so");
    if (so == std::string::npos)
        return {name, ""};
    std::string version = name.size() > so + 4 ? name.substr(so + 4) : "";
    return {name.substr(0, so), version};
}

std::string versionOf(const std::string &path)
{
    // The soname link names the ABI; the file it resolves to usually carries the full version.
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(path, ec);
    std::string version = sonameParts(baseName(path)).second;
    if (!ec) {
        const std::string realVersion = sonameParts(real.filename().string()).second;
        if (realVersion.size() > version.size())
            version = realVersion;
    }
    return version;
}

} // namespace

std::string guessMainExecutable(const Profile &profile)
{
    for (const Mapping &m : profile.mappings()) {
        const std::string &path = profile.str(m.filename);
        if (path.empty() || path.front() != '/')
            continue;
        if (!isSharedObject(baseName(path)))
            return path;
    }
    return {};
}

std::vector<CodeProvenanceEntry> codeProvenanceEntries(const Profile &profile, const CodeProvenanceOptions &options)
{
    const std::string mainPath = options.mainExecutable.empty() ? guessMainExecutable(profile) : options.mainExecutable;
    std::vector<CodeProvenanceEntry> entries;
    std::map<std::string, size_t> byName; // kind + name -> entry index
    auto add = [&](const std::string &kind, const std::string &name, const std::string &version,
                   const std::string &path) {
        const std::string key = kind + '\n' + name;
        auto [it, inserted] = byName.emplace(key, entries.size());
        if (inserted)
            entries.push_back(CodeProvenanceEntry{kind, name, version, {}});
        auto &paths = entries[it->second].paths;
        if (std::find(paths.begin(), paths.end(), path) == paths.end())
            paths.push_back(path);
    };
    if (!mainPath.empty())
        add("", options.mainName.empty() ? baseName(mainPath) : options.mainName, options.mainVersion, mainPath);
    for (const Mapping &m : profile.mappings()) {
        const std::string &path = profile.str(m.filename);
        if (path.empty() || path == mainPath)
            continue;
        const std::string name = baseName(path);
        if (isRuntimeLibrary(name)) {
            add("standard library", sonameParts(name).first, versionOf(path), path);
        } else if (name.rfind("libQt6", 0) == 0 || name.rfind("libQt5", 0) == 0) {
            add("library", "qt", versionOf(path), path);
        } else if (path.front() == '/' && isSharedObject(name)) {
            add("library", sonameParts(name).first, versionOf(path), path);
        } else if (path.front() == '/') {
            add("library", name, "", path); // another executable file mapped in (a plugin without .so)
        }
    }
    return entries;
}

std::string codeProvenanceJson(const std::vector<CodeProvenanceEntry> &entries)
{
    QJsonArray list;
    for (const CodeProvenanceEntry &e : entries) {
        QJsonArray paths;
        for (const std::string &p : e.paths)
            paths.append(QString::fromStdString(p));
        list.append(QJsonObject{{QStringLiteral("kind"), QString::fromStdString(e.kind)},
                                {QStringLiteral("name"), QString::fromStdString(e.name)},
                                {QStringLiteral("version"), QString::fromStdString(e.version)},
                                {QStringLiteral("paths"), paths}});
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("v1"), list}}).toJson(QJsonDocument::Compact).toStdString();
}

} // namespace emberline::engine
