#include "engine/upload/compression.h"

#include <zlib.h>
#include <zstd.h>

namespace emberline::engine {

bool isGzip(std::string_view data)
{
    return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
           static_cast<unsigned char>(data[1]) == 0x8b;
}

Result<std::string> zstdCompress(std::string_view data, int level)
{
    std::string out(ZSTD_compressBound(data.size()), '\0');
    const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
    if (ZSTD_isError(n))
        return makeError(Error::Code::Internal, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

Result<std::string> gzipCompress(std::string_view data, int level)
{
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return makeError(Error::Code::Internal, "gzip compression could not start");
    std::string out(deflateBound(&z, data.size()) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    const size_t produced = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        return makeError(Error::Code::Internal, "gzip compression failed");
    out.resize(produced);
    return out;
}

Result<std::string> gunzip(std::string_view data, size_t maxBytes)
{
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return makeError(Error::Code::Internal, "gzip decompression could not start");
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    std::string out;
    char buffer[64 * 1024];
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef *>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&z);
            return makeError(Error::Code::Format, "the pprof bytes are not valid gzip");
        }
        out.append(buffer, sizeof buffer - z.avail_out);
        if (out.size() > maxBytes) {
            inflateEnd(&z);
            return makeError(Error::Code::Limit, "the pprof inflates beyond the size limit");
        }
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
            inflateEnd(&z);
            return makeError(Error::Code::Format, "the pprof gzip stream is truncated");
        }
    }
    inflateEnd(&z);
    return out;
}

} // namespace emberline::engine
