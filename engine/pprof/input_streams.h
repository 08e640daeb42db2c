#pragma once

#include <google/protobuf/io/zero_copy_stream.h>

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>

namespace emberline::engine {

using google::protobuf::io::ZeroCopyInputStream;

// Skip() for streams that can only be read forward: read and drop, backing up the excess.
bool skipByReading(ZeroCopyInputStream &stream, int count);

// Streams under the pprof reader.
//
// Thread: each belongs to one read, on one thread.

// Counts the bytes that pass through and, when a limit is set, ends the stream past it.
class CountingStream final : public ZeroCopyInputStream {
public:
    CountingStream(ZeroCopyInputStream *inner, uint64_t limit) : m_inner(inner), m_limit(limit) {}

    bool Next(const void **data, int *size) override
    {
        if (!m_inner->Next(data, size))
            return false;
        m_count += static_cast<uint64_t>(*size);
        if (m_count > m_limit) {
            m_exceeded = true;
            return false;
        }
        return true;
    }
    void BackUp(int count) override
    {
        m_inner->BackUp(count);
        m_count -= static_cast<uint64_t>(count);
    }
    bool Skip(int count) override { return skipByReading(*this, count); }
    int64_t ByteCount() const override { return static_cast<int64_t>(m_count); }
    bool exceeded() const { return m_exceeded; }

private:
    ZeroCopyInputStream *m_inner;
    uint64_t m_limit;
    uint64_t m_count = 0;
    bool m_exceeded = false;
};

// Inflates gzip (several concatenated members too) straight from zlib. protobuf's GzipInputStream reports an
// input that ends in the middle of the deflate stream or its trailer as a clean end, so a cut file whose
// protobuf happens to be complete would be accepted; this stream knows whether zlib saw the member's end and
// its CRC and length checked.
class GzipStream final : public ZeroCopyInputStream {
public:
    explicit GzipStream(ZeroCopyInputStream *source) : m_source(source), m_buffer(new unsigned char[kBufferSize])
    {
        m_ok = inflateInit2(&m_z, 16 + MAX_WBITS) == Z_OK;
        if (!m_ok)
            m_error = "zlib could not be initialised";
    }
    ~GzipStream() override { inflateEnd(&m_z); }
    GzipStream(const GzipStream &) = delete;
    GzipStream &operator=(const GzipStream &) = delete;

    bool Next(const void **data, int *size) override;
    void BackUp(int count) override
    {
        m_backedUp = count;
        m_count -= static_cast<uint64_t>(count);
    }
    bool Skip(int count) override { return skipByReading(*this, count); }
    int64_t ByteCount() const override { return static_cast<int64_t>(m_count); }
    // Empty while the stream is sound; otherwise what zlib (or the end of input) said.
    const std::string &error() const { return m_error; }

private:
    static constexpr uInt kBufferSize = 256u << 10;

    ZeroCopyInputStream *m_source;
    std::unique_ptr<unsigned char[]> m_buffer;
    z_stream m_z{};
    bool m_ok = false;
    bool m_memberEnded = false;
    bool m_anyInput = false;
    int m_chunkSize = 0;
    int m_backedUp = 0;
    uint64_t m_count = 0;
    std::string m_error;
};

} // namespace emberline::engine
