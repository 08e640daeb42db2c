#include "engine/common/heap_trimmer.h"

#include <cstdio>

#include <malloc.h>
#include <unistd.h>

namespace emberline::engine {

size_t HeapTrimmer::residentBytes()
{
    std::FILE *statm = std::fopen("/proc/self/statm", "re");
    if (!statm)
        return 0;
    unsigned long size = 0;
    unsigned long resident = 0;
    const int read = std::fscanf(statm, "%lu %lu", &size, &resident);
    std::fclose(statm);
    if (read != 2)
        return 0;
    return static_cast<size_t>(resident) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

bool HeapTrimmer::afterWork()
{
    const size_t resident = residentBytes();
    if (resident == 0) {
        ::malloc_trim(0); // no measure: keep the resident size down as before
        return true;
    }
    if (m_baseline == 0) {
        m_baseline = resident;
        return false;
    }
    if (resident <= m_baseline + m_slack)
        return false;
    ::malloc_trim(0);
    m_baseline = residentBytes();
    return true;
}

} // namespace emberline::engine
