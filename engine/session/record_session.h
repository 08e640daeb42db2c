#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/flush/flush_consumers.h"
#include "engine/session/sampler_factory.h"
#include "engine/session/session_config.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace emberline::engine {

// A whole recording: launch or attach, take a sampler from the factory, unwind and record on the calling thread
// (the session thread), flush every period through the exporter thread, and a final flush at the end. Each flush the
// exporter wrote goes to the session's flush consumers (FlushConsumers: the uploader, the window's live stage,
// `record`'s printer), which also learn the target. The GUI runs it on its engine thread; `emberline record` runs it
// on the main thread; tests run it behind a fake or replayed sampler (the factory).
//
// When the program gets Emberline's agent (memory profiling, the in-process sampler), the session owns the order of
// the agent's records: after each drain of the sampler it reads the rings once (RingReader), CPU records to the
// in-process sampler and memory records to the memory side (MemorySession), and a sampler that reports execs itself
// drains through an ExecBarrier that reads an exec'ing process's old image first. The sampling and memory sides never
// call each other; the memory side only uses the sampling side's unwinder (AllocationUnwinder).
//
// Thread: run() on the session thread; `stop` may be set from any thread or a signal handler.
class RecordSession {
public:
    using FlushCallback = std::function<void(std::shared_ptr<const Flush>)>;
    using StatsCallback = std::function<void(const SessionStats &)>;

    struct Callbacks {
        StatsCallback onStats; // on the session thread, about every 250 ms
        // Every reported flush goes to each of these on the exporter thread as soon as it is written; null: none.
        std::shared_ptr<FlushConsumers> consumers;
    };

    // An empty factory means the system's sampler (openSystemSampler).
    explicit RecordSession(SessionConfig config, SamplerFactory samplerFactory = {});
    ~RecordSession();
    Result<SessionSummary> run(SessionControl &control, const Callbacks &callbacks);
    // Stop-only form, for callers that neither pause nor watch live numbers: `onFlush` is the one flush consumer.
    Result<SessionSummary> run(const std::atomic<bool> &stop, FlushCallback onFlush = {});

private:
    struct Running;
    // Output folder, target, sampler, recorder and exporter; the target runs when it returns.
    Result<std::unique_ptr<Running>> start(const Callbacks &callbacks);
    // Drains the sampler into the pipeline until the session ends; reports live numbers and schedules flushes.
    void loop(Running &r, SessionControl &control, const Callbacks &callbacks);
    // The one read of the agent's rings (RingReader): CPU records to the in-process sampler, memory records to the
    // memory side, after the sampler's drain that began at `drainedFrom` (CLOCK_MONOTONIC).
    void readRings(Running &r, int64_t drainedFrom);
    // Applies a new stack copy size when the learned one should change.
    void adaptStackCopy(Running &r, int64_t now);
    // Sets the summary's end reason and returns true when the session is over.
    bool ended(Running &r, const SessionControl &control, int64_t now);
    // Tells the flush consumers the launched program's executable once it has run (the first live numbers are due).
    void announceTarget(Running &r, const Callbacks &callbacks, int64_t now);
    // Hands the recorder's flush to the exporter when the flush period has passed.
    void schedule(Running &r, int64_t now);
    void reportStats(Running &r, const Callbacks &callbacks, int64_t now);
    // Stops sampling, ends a launched target, writes the final flush and the session profile, sums up.
    Result<SessionSummary> finish(Running &r);

    SessionConfig m_config;
    SamplerFactory m_samplerFactory;
};

} // namespace emberline::engine
