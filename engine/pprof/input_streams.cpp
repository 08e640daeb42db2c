#include "engine/pprof/input_streams.h"

namespace emberline::engine {

bool skipByReading(ZeroCopyInputStream &stream, int count)
{
    const void *data;
    int size;
    while (count > 0) {
        if (!stream.Next(&data, &size))
            return false;
        if (size > count) {
            stream.BackUp(size - count);
            return true;
        }
        count -= size;
    }
    return true;
}

bool GzipStream::Next(const void **data, int *size)
{
    if (m_backedUp > 0) {
        *data = m_buffer.get() + m_chunkSize - m_backedUp;
        *size = m_backedUp;
        m_count += static_cast<uint64_t>(m_backedUp);
        m_backedUp = 0;
        return true;
    }
    while (m_ok) {
        if (m_z.avail_in == 0) {
            const void *in = nullptr;
            int n = 0;
            if (!m_source->Next(&in, &n)) {
                if (!m_memberEnded) {
                    m_ok = false;
                    m_error = m_anyInput ? "the gzip stream is truncated" : "no data";
                }
                return false;
            }
            m_z.next_in = static_cast<Bytef *>(const_cast<void *>(in));
            m_z.avail_in = static_cast<uInt>(n);
            if (n == 0)
                continue;
            m_anyInput = true;
        }
        if (m_memberEnded) {
            // More bytes after a complete member: another gzip member follows (or garbage, which fails).
            inflateReset(&m_z);
            m_memberEnded = false;
        }
        m_z.next_out = m_buffer.get();
        m_z.avail_out = kBufferSize;
        const int rc = inflate(&m_z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
            m_memberEnded = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            m_ok = false;
            m_error = m_z.msg ? m_z.msg : "zlib error " + std::to_string(rc);
            return false;
        }
        const int produced = static_cast<int>(kBufferSize - m_z.avail_out);
        if (produced > 0) {
            m_chunkSize = produced;
            *data = m_buffer.get();
            *size = produced;
            m_count += static_cast<uint64_t>(produced);
            return true;
        }
    }
    return false;
}

} // namespace emberline::engine
