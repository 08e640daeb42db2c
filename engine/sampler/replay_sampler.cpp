#include "engine/sampler/replay_sampler.h"

namespace emberline::engine {

Result<std::unique_ptr<ReplaySampler>> ReplaySampler::open(const std::string &path, Options options)
{
    auto reader = SampleLogReader::open(path);
    if (!reader)
        return reader.error();
    return std::unique_ptr<ReplaySampler>(new ReplaySampler(std::move(reader).value(), path, options));
}

ReplaySampler::ReplaySampler(std::unique_ptr<SampleLogReader> reader, std::string path, Options options)
    : m_reader(std::move(reader)), m_path(std::move(path)), m_options(options)
{
}

size_t ReplaySampler::drain(SampleSink &sink)
{
    if (!m_enabled || m_finished)
        return 0;
    auto delivered = m_reader->deliver(sink, m_options.recordsPerDrain);
    if (!delivered) {
        m_problem = delivered.error().message;
        m_finished = true;
        return 0;
    }
    m_finished = m_reader->atEnd();
    return delivered.value();
}

std::string ReplaySampler::description() const
{
    return "replay of " + m_path + " (" + std::to_string(m_reader->delivered()) + " records)";
}

CapturingSampler::CapturingSampler(std::unique_ptr<Sampler> inner, std::unique_ptr<SampleLogWriter> log)
    : m_inner(std::move(inner)), m_log(std::move(log))
{
}

size_t CapturingSampler::drain(SampleSink &sink)
{
    m_log->setNext(&sink);
    const size_t n = m_inner->drain(*m_log);
    m_log->setNext(nullptr);
    return n;
}

void CapturingSampler::release()
{
    m_inner->release();
    m_logStatus = m_log->close();
}

} // namespace emberline::engine
