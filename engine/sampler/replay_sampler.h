#pragma once

#include "engine/sampler/sample_log.h"
#include "engine/sampler/sampler.h"

#include <limits>
#include <memory>
#include <string>

namespace emberline::engine {

// A sampler whose records come from a sample log (SampleLogReader) instead of the kernel: a session driven by
// it runs the real unwinder, recorder, exporter and live stage on samples captured earlier from a real
// program, without perf events, ptrace or the program. Each drain delivers at most `recordsPerDrain` records;
// finished() once the whole log is delivered, or once it turned out cut or corrupt (problem() says where).
//
// Thread: the session thread.
class ReplaySampler final : public Sampler {
public:
    struct Options {
        size_t recordsPerDrain = std::numeric_limits<size_t>::max();
        bool wallTime = false; // the log was captured with context switches (wall time)
    };
    static Result<std::unique_ptr<ReplaySampler>> open(const std::string &path, Options options);

    void wait(int timeoutMs) override { (void)timeoutMs; }
    size_t drain(SampleSink &sink) override;
    void disable() override { m_enabled = false; }
    void enable() override { m_enabled = true; }
    std::string description() const override;
    bool wallTime() const override { return m_options.wallTime; }
    bool reportsMappings() const override { return true; } // a log holds the mappings its sampler reported
    bool finished() const override { return m_finished; }
    const std::string &problem() const { return m_problem; }

private:
    ReplaySampler(std::unique_ptr<SampleLogReader> reader, std::string path, Options options);

    std::unique_ptr<SampleLogReader> m_reader;
    std::string m_path;
    Options m_options;
    bool m_enabled = true;
    bool m_finished = false;
    std::string m_problem;
};

// Wraps a sampler and writes everything it delivers to a sample log on its way to the pipeline, so that a
// real session can be replayed later (ReplaySampler). Everything else is the wrapped sampler's.
//
// Thread: the session thread.
class CapturingSampler final : public Sampler {
public:
    CapturingSampler(std::unique_ptr<Sampler> inner, std::unique_ptr<SampleLogWriter> log);

    void wait(int timeoutMs) override { m_inner->wait(timeoutMs); }
    size_t drain(SampleSink &sink) override;
    void disable() override { m_inner->disable(); }
    void enable() override { m_inner->enable(); }
    std::string description() const override { return m_inner->description(); }
    bool wallTime() const override { return m_inner->wallTime(); }
    std::string wallTimeProblem() const override { return m_inner->wallTimeProblem(); }
    std::string kernelFramesProblem() const override { return m_inner->kernelFramesProblem(); }
    uint64_t foreignSamplesDropped() const override { return m_inner->foreignSamplesDropped(); }
    bool setStackCopyBytes(uint32_t bytes) override { return m_inner->setStackCopyBytes(bytes); }
    uint32_t stackCopyBytes() const override { return m_inner->stackCopyBytes(); }
    std::string stackCopyProblem() const override { return m_inner->stackCopyProblem(); }
    bool observesTargetExit() const override { return m_inner->observesTargetExit(); }
    bool targetExited(int &exitStatus) override { return m_inner->targetExited(exitStatus); }
    bool reportsMappings() const override { return m_inner->reportsMappings(); }
    bool finished() const override { return m_inner->finished(); }
    void release() override;
    void countHelperCpu(std::function<int64_t()> cpuNs) override { m_inner->countHelperCpu(std::move(cpuNs)); }
    // The log's first write error (a full disk), once released; the session itself is not affected.
    const Status &logStatus() const { return m_logStatus; }

private:
    std::unique_ptr<Sampler> m_inner;
    std::unique_ptr<SampleLogWriter> m_log;
    Status m_logStatus = Ok{};
};

} // namespace emberline::engine
