#include "engine/process/process_memory.h"

#include "engine/process/proc_files.h"

#include <QDir>

#include <algorithm>

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <unordered_map>

namespace emberline::engine {

int64_t residentBytes(int pid)
{
    if (pid <= 0)
        return -1;
    const std::string statm = readProcFile("/proc/" + std::to_string(pid) + "/statm");
    if (statm.empty())
        return -1;
    // "size resident shared text lib data dt", in pages.
    char *end = nullptr;
    std::strtoll(statm.c_str(), &end, 10);
    const long long pages = std::strtoll(end, nullptr, 10);
    static const long pageSize = ::sysconf(_SC_PAGESIZE);
    return static_cast<int64_t>(pages) * pageSize;
}

std::vector<int> processTree(int rootPid)
{
    if (residentBytes(rootPid) < 0)
        return {};
    std::unordered_multimap<int, int> children;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool numeric = false;
        const int pid = entry.toInt(&numeric);
        if (!numeric)
            continue;
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
        const std::string stat = readProcFile("/proc/" + std::to_string(pid) + "/stat");
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 4 >= stat.size())
            continue;
        children.emplace(std::atoi(stat.c_str() + close + 4), pid);
    }
    std::vector<int> tree{rootPid};
    for (size_t i = 0; i < tree.size(); ++i) {
        const auto [first, last] = children.equal_range(tree[i]);
        for (auto it = first; it != last; ++it)
            tree.push_back(it->second);
    }
    return tree;
}

ProcessTreeMemory::ProcessTreeMemory(int rootPid, int rescanEvery)
    : m_root(rootPid), m_rescanEvery(rescanEvery > 0 ? rescanEvery : 1)
{
}

int64_t ProcessTreeMemory::residentBytes()
{
    if (m_reads++ % m_rescanEvery == 0)
        m_tree = processTree(m_root);
    if (m_tree.empty())
        return -1;
    const int64_t root = engine::residentBytes(m_root);
    if (root < 0)
        return -1;
    int64_t total = root;
    for (size_t i = 1; i < m_tree.size(); ++i)
        total += std::max<int64_t>(engine::residentBytes(m_tree[i]), 0);
    return total;
}

} // namespace emberline::engine
