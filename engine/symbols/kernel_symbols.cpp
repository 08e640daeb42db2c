#include "engine/symbols/kernel_symbols.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

namespace emberline::engine {
namespace {

std::string kptrRestrict()
{
    std::ifstream f("/proc/sys/kernel/kptr_restrict");
    std::string v;
    f >> v;
    return v.empty() ? std::string("unknown") : v;
}

std::string hiddenMessage(const std::string &path)
{
    return path + " shows no kernel addresses to this user (kernel.kptr_restrict is " + kptrRestrict() +
           "): kernel time stays one [kernel] frame. Run as root with kptr_restrict at 0 or 1 (sudo sysctl "
           "kernel.kptr_restrict=0) to name kernel functions";
}

struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
};

// "ffffffff81000000 T _stext\t[module]" -> address, type, name (without the module).
bool parseLine(const char *line, uint64_t &address, char &type, std::string_view &name)
{
    char *end = nullptr;
    address = std::strtoull(line, &end, 16);
    if (end == line || *end != ' ' || end[1] == '\0' || end[2] != ' ')
        return false;
    type = end[1];
    const char *n = end + 3;
    size_t len = std::strcspn(n, "\t\n ");
    if (len == 0)
        return false;
    name = std::string_view(n, len);
    return true;
}

} // namespace

std::string KernelSymbols::problem(const std::string &path)
{
    std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "re"));
    if (!f)
        return "cannot read " + path + " (" + std::strerror(errno) + "): kernel time stays one [kernel] frame";
    char line[512];
    for (int i = 0; i < 64 && std::fgets(line, sizeof line, f.get()); ++i) {
        uint64_t address = 0;
        char type = 0;
        std::string_view name;
        if (parseLine(line, address, type, name) && address != 0)
            return {};
    }
    return hiddenMessage(path);
}

Result<KernelSymbols> KernelSymbols::load(const std::string &path)
{
    std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "re"));
    if (!f)
        return makeError(Error::Code::Io, "cannot read " + path + ": " + std::strerror(errno));
    KernelSymbols table;
    table.m_entries.reserve(1 << 16);
    table.m_names.reserve(1 << 21);
    char line[1024];
    bool anyAddress = false;
    while (std::fgets(line, sizeof line, f.get())) {
        uint64_t address = 0;
        char type = 0;
        std::string_view name;
        if (!parseLine(line, address, type, name))
            continue;
        anyAddress = anyAddress || address != 0;
        // Code only: text symbols, global or local, and weak ones.
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        if (table.m_names.size() + name.size() > UINT32_MAX)
            return makeError(Error::Code::Limit, path + " has more symbol text than Emberline reads");
        table.m_entries.push_back(
            Entry{address, static_cast<uint32_t>(table.m_names.size()), static_cast<uint32_t>(name.size())});
        table.m_names.append(name);
    }
    if (!anyAddress)
        return makeError(Error::Code::Permission, hiddenMessage(path));
    std::stable_sort(table.m_entries.begin(), table.m_entries.end(),
                     [](const Entry &a, const Entry &b) { return a.address < b.address; });
    // Kept for the whole session: give back what growing left unused (a quarter to a half of each).
    table.m_entries.shrink_to_fit();
    table.m_names.shrink_to_fit();
    return table;
}

KernelSymbols::Found KernelSymbols::lookup(uint64_t address) const
{
    auto it = std::upper_bound(m_entries.begin(), m_entries.end(), address,
                               [](uint64_t a, const Entry &e) { return a < e.address; });
    if (it == m_entries.begin())
        return {};
    --it;
    return {std::string_view(m_names).substr(it->nameOffset, it->nameLength), address - it->address};
}

} // namespace emberline::engine
