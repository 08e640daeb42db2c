#pragma once

#include "engine/common/result.h"

#include <string>
#include <string_view>

namespace emberline::engine {

// Attachment codecs. The intake tells them apart by their magic bytes (zstd 28 B5 2F FD, gzip 1F 8B).
// Thread: any.
Result<std::string> zstdCompress(std::string_view data, int level = 1);
Result<std::string> gzipCompress(std::string_view data, int level = 6);
// Inflates a gzip member (the exporter's pprof bytes); refuses output beyond maxBytes.
Result<std::string> gunzip(std::string_view data, size_t maxBytes = size_t(1) << 31);
bool isGzip(std::string_view data);

} // namespace emberline::engine
