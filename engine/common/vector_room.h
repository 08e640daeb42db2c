#pragma once

#include <cstddef>
#include <vector>

namespace emberline::engine {

// Capacity for n, with room to spare when it has to grow: for arrays that grow a little with every live refresh.
// One sized exactly would be reallocated, its pages faulted in afresh, every time; one that doubled would hold
// up to twice what it needs.
template <typename T> void reserveWithRoom(std::vector<T> &out, size_t n)
{
    if (out.capacity() < n)
        out.reserve(n + n / 8 + 1024);
}

} // namespace emberline::engine
