#include "engine/model/python_frame.h"

#include <cctype>
#include <vector>

namespace emberline::engine {
namespace {

constexpr std::string_view kFrozenPrefix = "<frozen ";

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string_view> components(std::string_view path)
{
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (start <= path.size()) {
        const size_t slash = path.find('/', start);
        const size_t end = slash == std::string_view::npos ? path.size() : slash;
        if (end > start)
            parts.push_back(path.substr(start, end - start));
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return parts;
}

// "python3.12", "python3.13t" (a free-threaded build), "python3": the standard library's folder under lib/.
bool isStdlibFolder(std::string_view name)
{
    if (name.substr(0, 6) != "python" || name.size() == 6)
        return false;
    std::string_view version = name.substr(6);
    if (version.back() == 't')
        version.remove_suffix(1);
    bool digit = false;
    for (char c : version) {
        if (c == '.' && digit)
            digit = false;
        else if (std::isdigit(static_cast<unsigned char>(c)))
            digit = true;
        else
            return false;
    }
    return digit;
}

// The parts of a Python file's path below its import root; the base name alone (with its folder, for a package's
// __init__.py) when it lies under no root Emberline knows: a script, or a project's own code.
std::vector<std::string_view> importParts(std::string_view file)
{
    const std::vector<std::string_view> parts = components(file);
    size_t root = parts.size();
    for (size_t i = parts.size(); i-- > 0 && root == parts.size();) {
        if (parts[i] == "site-packages" || parts[i] == "dist-packages")
            root = i;
    }
    for (size_t i = parts.size(); i-- > 1 && root == parts.size();) {
        if ((parts[i - 1] == "lib" || parts[i - 1] == "lib64") && isStdlibFolder(parts[i]))
            root = i;
    }
    if (root + 1 < parts.size())
        return {parts.begin() + static_cast<std::ptrdiff_t>(root + 1), parts.end()};
    if (parts.size() >= 2 && parts.back() == "__init__.py")
        return {parts.end() - 2, parts.end()};
    if (parts.empty())
        return {file};
    return {parts.back()};
}

} // namespace

bool isInterpreterFunction(const Profile &profile, const Function &function)
{
    return function.systemName != 0 && profile.str(function.systemName).starts_with(kInterpreterSystemNamePrefix);
}

bool hasInterpreterFunctions(const Profile &profile)
{
    for (const Function &function : profile.functions())
        if (isInterpreterFunction(profile, function))
            return true;
    return false;
}

bool isFrozenPythonFile(std::string_view file)
{
    return file.substr(0, kFrozenPrefix.size()) == kFrozenPrefix && endsWith(file, ">");
}

bool isPythonSourceFile(std::string_view file)
{
    return endsWith(file, ".py") || endsWith(file, ".pyw") || isFrozenPythonFile(file);
}

bool isPythonFrame(const Frame &frame)
{
    return frame.module.empty() && isPythonSourceFile(frame.file);
}

bool isPythonLine(const Profile &profile, const Location &location, const Line &line)
{
    // As FrameTable names a frame's module: a mapping without a file name is none.
    const bool mapped = location.mappingIndex < profile.mappings().size() &&
                        !profile.str(profile.mappings()[location.mappingIndex].filename).empty();
    return !mapped && line.functionIndex < profile.functions().size() &&
           isPythonSourceFile(profile.str(profile.functions()[line.functionIndex].filename));
}

std::string pythonImportPath(std::string_view file)
{
    if (isFrozenPythonFile(file))
        return std::string(file);
    std::string path;
    for (std::string_view part : importParts(file)) {
        if (!path.empty())
            path += '/';
        path += part;
    }
    return path;
}

std::string pythonModuleName(std::string_view file)
{
    if (isFrozenPythonFile(file))
        return std::string(file.substr(kFrozenPrefix.size(), file.size() - kFrozenPrefix.size() - 1));
    std::vector<std::string_view> parts = importParts(file);
    std::string_view &last = parts.back();
    last = last.substr(0, last.rfind('.'));
    if (last == "__init__" && parts.size() > 1)
        parts.pop_back();
    std::string module;
    for (std::string_view part : parts) {
        if (!module.empty())
            module += '.';
        module += part;
    }
    return module;
}

} // namespace emberline::engine
