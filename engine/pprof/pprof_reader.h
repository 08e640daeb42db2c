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
    // What a profile can sensibly hold, checked while the stream is parsed (never after): a file of millions of
    // tiny messages takes several times its decompressed size in memory, so the decompressed limit alone lets
    // a 1.5 MB gzip file take gigabytes. The memory of the profile being built (sample columns, labels,
    // stacks, strings, tables) is estimated from its containers as it grows.
    uint64_t maxModelBytes = 1ull << 30;
    uint32_t maxMessageBytes = 16u << 20; // one sample, location, function or mapping
    uint64_t maxSamples = 50'000'000;
    uint64_t maxTableEntries = 10'000'000; // locations, functions, mappings and strings, each
    // Past `ratioCheckAfterBytes` of model, a profile whose model takes more than this many bytes per
    // decompressed byte is refused: real profiles take 2 to 8, floods of empty messages 16 to 36.
    uint32_t maxModelBytesPerInputByte = 16;
    // Past `ratioCheckAfterBytes` of output, gzip input that inflates more than `maxCompressionRatio` times is
    // refused as a bomb. Real profiles inflate 2 to 20 times; deflate's ceiling is about 1030.
    uint32_t maxCompressionRatio = 100;
    uint64_t ratioCheckAfterBytes = 64ull << 20;
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
