#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace emberline::engine {

struct PprofReadOptions {
    // Decompressed bytes beyond this are refused (a gzip bomb, or a file no machine should load).
    uint64_t maxDecompressedBytes = 2ull << 30;
    // Any single string (function name, file name, label) longer than this is refused.
    uint32_t maxStringBytes = 16u << 20;
    const std::atomic<bool> *cancel = nullptr;
    // Called now and then with the fraction of the input consumed, from the reading thread.
    std::function<void(double)> progress;
};

// Reads gzip-compressed or raw profile.proto, streaming: samples are interned as they are decoded, never held
// as protobuf messages, so memory stays near the size of the unique stacks. Every id and string index is
// checked; any inconsistency is an Error that names the file and the problem.
//
// Thread: any; one call owns everything it touches.
Result<Profile> readPprofFile(const std::string &path, const PprofReadOptions &options = {});
Result<Profile> readPprofBytes(std::string_view bytes, const std::string &name = "<memory>",
                               const PprofReadOptions &options = {});

} // namespace emberline::engine
