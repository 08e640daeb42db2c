#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace emberline::engine {

// Where to cut a file of `perf script` text into about `parts` pieces of similar size that parse apart: each cut
// is at the start of a line that follows an empty line (a sample's end), so that no sample straddles two parts.
// Returns the offsets from 0 to `size`, at least {0, size}: a file without an empty line near a cut has fewer parts.
// `fd` is read with pread, a window at each cut.
//
// Thread: any.
std::vector<uint64_t> cutAtSampleEnds(int fd, uint64_t size, size_t parts);

} // namespace emberline::engine
