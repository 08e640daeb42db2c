// The sampling stage without a kernel: samples of the test process itself (registers and a stack copy, as the
// perf sampler delivers them) go through the real unwinder, recorder and exporter, alone and inside a whole
// RecordSession driven by a scripted sampler. Runs unprivileged: no perf events, no ptrace.
#include "tests/engine/session/own_stack.h"

#include "engine/common/clock.h"
#include "engine/flush/exporter.h"
#include "engine/model/frame_table.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/recorder/recorder.h"
#include "engine/sampler/replay_sampler.h"
#include "engine/sampler/stack_copy_policy.h"
#include "engine/session/record_session.h"
#include "engine/session/sampling_pipeline.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/mman.h>

#include <ctime>
#include <mutex>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

// A known call chain: outerFrame -> middleFrame -> innerFrame -> captureOwnStack.
__attribute__((noinline)) OwnSample innerFrame()
{
    OwnSample s = captureOwnStack();
    asm volatile("" ::: "memory"); // keeps the call from becoming a tail call
    return s;
}
__attribute__((noinline)) OwnSample middleFrame()
{
    OwnSample s = innerFrame();
    asm volatile("" ::: "memory");
    return s;
}
__attribute__((noinline)) OwnSample outerFrame()
{
    OwnSample s = middleFrame();
    asm volatile("" ::: "memory");
    return s;
}

// 48 frames of at least 256 bytes each above the capture: a stack deeper than 12 KiB.
__attribute__((noinline)) OwnSample deepFrame(int depth)
{
    volatile char pad[256];
    pad[0] = static_cast<char>(depth);
    OwnSample s = depth == 0 ? captureOwnStack() : deepFrame(depth - 1);
    asm volatile("" ::: "memory");
    s.raw.period += static_cast<uint64_t>(pad[0] & 0); // keeps pad alive across the call
    return s;
}

OwnSample sampleNow()
{
    OwnSample s = outerFrame();
    s.raw.timeNs = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC));
    return s;
}

// Function names of a profile's sample i, leaf first (inlined frames expanded).
std::vector<std::string> frameNames(const Profile &p, size_t i)
{
    std::vector<std::string> names;
    for (uint32_t loc : p.sample(i).locations) {
        for (const Line &line : p.locations()[loc].lines)
            names.push_back(p.str(p.functions()[line.functionIndex].name));
    }
    return names;
}

// Index of the first name containing `what`, or -1.
int indexOf(const std::vector<std::string> &names, const std::string &what)
{
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i].find(what) != std::string::npos)
            return static_cast<int>(i);
    }
    return -1;
}

std::shared_ptr<const Flush> exportAll(Recorder &recorder)
{
    Exporter exporter(ExporterOptions{});
    auto flush = exporter.exportFlush(recorder.takeFlush(0, 2'000'000'000, false));
    if (!flush)
        qFatal("export failed: %s", flush.error().message.c_str());
    return flush.value();
}

} // namespace

class TestSamplingPipeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void unwindsAndSymbolizesOwnStack();
    void exitedThreadsAreForgotten();
    void offCpuIntervalLastsUntilSwitchIn();
    void preemptionDropsTheSchedulersKernelFrames();
    void sessionRunsBehindScriptedSampler();
    void replayedLogGivesTheSameProfile();
    void strayAddressIsNotCalledJitCode();
    void stackCopyLearnedFromTheWalks();
};

// If this fails, the unwinder, the recorder's interning or the exporter's symbolization lost or reordered
// frames of a stack whose frames are known.
void TestSamplingPipeline::unwindsAndSymbolizesOwnStack()
{
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    const OwnSample s = sampleNow();
    pipeline.onSample(s.view());
    QCOMPARE(recorder.pendingSamples(), size_t(1));
    auto flush = exportAll(recorder);
    QVERIFY(flush);
    QCOMPARE(flush->profile->sampleCount(), size_t(1));
    const auto names = frameNames(*flush->profile, 0);
    const int inner = indexOf(names, "innerFrame");
    const int middle = indexOf(names, "middleFrame");
    const int outer = indexOf(names, "outerFrame");
    const QString stack = QString::fromStdString([&] {
        std::string all;
        for (const auto &n : names)
            all += n + " < ";
        return all;
    }());
    QVERIFY2(inner >= 0 && middle == inner + 1 && outer == middle + 1, qPrintable(stack));
    // The test's own slot and QtTest's machinery lie further out: the walk went past our frames.
    QVERIFY2(indexOf(names, "unwindsAndSymbolizesOwnStack") > outer, qPrintable(stack));
    QCOMPARE(recorder.incomplete(), uint64_t(0));
}

// If this fails, per-thread state of threads that exited stays for the whole session (it grows without bound in
// a program that keeps starting threads).
void TestSamplingPipeline::exitedThreadsAreForgotten()
{
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    const uint32_t pid = static_cast<uint32_t>(getpid());
    for (uint32_t tid = 100000; tid < 100050; ++tid) {
        pipeline.onFork(pid, pid, tid);
        pipeline.onSwitch(pid, tid, 1000, true, true);   // preempted
        pipeline.onSwitch(pid, tid, 2000, false, false); // back on a CPU before its switch-out sample
    }
    QCOMPARE(pipeline.threadsTracked(), size_t(50));
    for (uint32_t tid = 100000; tid < 100050; ++tid)
        pipeline.onExit(pid, tid);
    QCOMPARE(pipeline.threadsTracked(), size_t(0));
}

// If this fails, wall time of a waiting thread is lost or weighed by the wrong interval.
void TestSamplingPipeline::offCpuIntervalLastsUntilSwitchIn()
{
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    OwnSample s = sampleNow();
    s.raw.kind = RawSample::Kind::SwitchOut;
    const uint64_t out = s.raw.timeNs;
    pipeline.onSample(s.view());
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out, true, false);
    QCOMPARE(recorder.pendingSamples(), size_t(0)); // still waiting
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out + 7'000'000, false, false);
    FlushInput flush = recorder.takeFlush(0, 1, false);
    QCOMPARE(flush.samples.size(), size_t(1));
    QCOMPARE(flush.samples[0].wallNs, int64_t(7'000'000));
    QCOMPARE(flush.samples[0].cpuNs, int64_t(0));
    QVERIFY(!flush.samples[0].counted);
    QCOMPARE(flush.samples[0].state, static_cast<uint8_t>(ThreadState::Sleeping));
}

// If this fails, a preempted thread's time lands under the scheduler's kernel path (one more distinct stack per
// user stack of a busy program), or a wait loses the kernel frames that say what it waits for.
void TestSamplingPipeline::preemptionDropsTheSchedulersKernelFrames()
{
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    OwnSample s = sampleNow();
    s.raw.kind = RawSample::Kind::SwitchOut;
    // Kernel addresses of a switch's path (leaf first), as the kernel's callchain gives them.
    const std::vector<uint64_t> kernel{0xffffffff81a00010, 0xffffffff81a00120, 0xffffffff81000230};
    s.raw.kernelStack = kernel;
    const uint64_t out = s.raw.timeNs;
    // A wait, then a preemption, of the same stack.
    pipeline.onSample(s.view());
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out, true, false);
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out + 1'000'000, false, false);
    s.raw.timeNs = out + 2'000'000;
    pipeline.onSample(s.view());
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out + 2'000'000, true, true);
    pipeline.onSwitch(s.raw.pid, s.raw.tid, out + 5'000'000, false, false);
    FlushInput flush = recorder.takeFlush(0, 1, false);
    QCOMPARE(flush.samples.size(), size_t(2));
    const auto waited = flush.stacks.stack(flush.samples[0].stackId);
    const auto preempted = flush.stacks.stack(flush.samples[1].stackId);
    QCOMPARE(flush.samples[0].state, static_cast<uint8_t>(ThreadState::Sleeping));
    QCOMPARE(flush.samples[1].state, static_cast<uint8_t>(ThreadState::Running));
    QCOMPARE(flush.samples[1].wallNs, int64_t(3'000'000));
    // The wait's stack: the kernel path, then the user stack; the preemption's: the same user stack alone.
    QCOMPARE(waited.size(), preempted.size() + kernel.size());
    for (size_t i = 0; i < kernel.size(); ++i) {
        QCOMPARE(flush.locations[waited[i]].address, kernel[i]);
        QCOMPARE(flush.locations[waited[i]].moduleId, kKernelSymbolsModule);
    }
    QVERIFY(
        std::equal(preempted.begin(), preempted.end(), waited.begin() + static_cast<std::ptrdiff_t>(kernel.size())));
    QVERIFY(flush.locations[preempted[0]].moduleId != kKernelSymbolsModule);
}

// If this fails, a session cannot run behind a sampler from its factory, or it loses samples between the
// sampler and the files it writes.
void TestSamplingPipeline::sessionRunsBehindScriptedSampler()
{
    QTemporaryDir dir;
    SessionConfig config;
    config.pid = getpid(); // attach to ourselves: the scripted sampler needs no rights
    config.outputDirectory = dir.path().toStdString();
    const OwnSample s = sampleNow();
    std::vector<ScriptedSampler::Step> steps;
    steps.reserve(5);
    for (int drain = 0; drain < 5; ++drain) {
        steps.push_back([&s](SampleSink &sink) {
            for (int i = 0; i < 40; ++i)
                sink.onSample(s.view());
            return size_t(40);
        });
    }
    RecordSession session(config, [&steps](const SessionConfig &, int, std::string &choice) {
        choice = "scripted, for the test";
        return Result<std::unique_ptr<Sampler>>(std::make_unique<ScriptedSampler>(steps));
    });
    std::mutex mutex;
    uint64_t inFlushes = 0;
    std::atomic<bool> stop{false};
    auto result = session.run(stop, [&](const std::shared_ptr<const Flush> &f) {
        std::lock_guard lock(mutex);
        inFlushes += f->samples;
    });
    QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
    const SessionSummary &summary = result.value();
    QCOMPARE(summary.samplerChoice, std::string("scripted, for the test"));
    QCOMPARE(summary.samples, uint64_t(200));
    QCOMPARE(inFlushes, uint64_t(200));
    auto profile = readPprofFile(summary.sessionProfilePath);
    QVERIFY2(profile.ok(), profile.ok() ? "" : profile.error().message.c_str());
    const int samplesType = profile.value().sampleTypeIndex("cpu-samples");
    QVERIFY(samplesType >= 0);
    QCOMPARE(profile.value().totals()[samplesType], int64_t(200));
    QVERIFY(indexOf(frameNames(profile.value(), 0), "middleFrame") >= 0);
}

// If this fails, a sample log does not give back what was written to it, or a replayed session differs from
// the one fed directly.
void TestSamplingPipeline::replayedLogGivesTheSameProfile()
{
    QTemporaryDir dir;
    const std::string logPath = dir.filePath(QStringLiteral("own.samples")).toStdString();
    const OwnSample a = sampleNow();
    const OwnSample b = innerFrame();
    Recorder direct;
    SamplingPipeline directPipeline(direct);
    {
        auto log = SampleLogWriter::create(logPath);
        QVERIFY(log.ok());
        log.value()->setNext(&directPipeline);
        for (int i = 0; i < 30; ++i)
            log.value()->onSample((i % 3 ? a : b).view());
        QVERIFY(log.value()->close().ok());
    }
    SessionConfig config;
    config.pid = getpid();
    RecordSession session(config, [&](const SessionConfig &, int, std::string &) {
        auto replay = ReplaySampler::open(logPath, {7, false});
        if (!replay)
            return Result<std::unique_ptr<Sampler>>(replay.error());
        return Result<std::unique_ptr<Sampler>>(std::unique_ptr<Sampler>(std::move(replay).value()));
    });
    std::mutex mutex;
    std::vector<std::shared_ptr<const Flush>> flushes;
    std::atomic<bool> stop{false};
    auto result = session.run(stop, [&](const std::shared_ptr<const Flush> &f) {
        std::lock_guard lock(mutex);
        flushes.push_back(f);
    });
    QVERIFY(result.ok());
    QCOMPARE(result.value().samples, uint64_t(30));
    QCOMPARE(result.value().endReason, std::string("the sampler has delivered everything"));
    auto directFlush = exportAll(direct);
    QCOMPARE(flushes.size(), size_t(1));
    const Profile &replayed = *flushes[0]->profile;
    QCOMPARE(replayed.sampleCount(), directFlush->profile->sampleCount());
    for (size_t i = 0; i < replayed.sampleCount(); ++i)
        QCOMPARE(frameNames(replayed, i), frameNames(*directFlush->profile, i));
}

// If this fails, the learned stack copy does not hear what the unwinder's walks used of their copies: it would
// shrink under the stacks a program has, or not grow for one the copy cut short.
void TestSamplingPipeline::stackCopyLearnedFromTheWalks()
{
    const OwnSample deep = deepFrame(48);
    QVERIFY2(deep.stack.size() > size_t{12} * 1024, "the capture copies this thread's stack up to 32 KiB");

    // The whole stack copied: the walk completes, and the policy hears how much of the copy it read.
    {
        Recorder recorder;
        SamplingPipeline pipeline(recorder);
        StackCopyPolicy policy(StackCopyPolicy::Limits{8192, 32768, 65000});
        pipeline.setStackCopyPolicy(&policy);
        RawSample whole = deep.view();
        whole.stackLimit = 32768;
        pipeline.onSample(whole);
        QCOMPARE(recorder.incomplete(), uint64_t(0));
        QVERIFY2(policy.deepest() > uint64_t{48} * 256, qPrintable(QString::number(policy.deepest())));
        QVERIFY(policy.deepest() <= deep.stack.size());
    }
    // Copies of 8 KiB cut it short: the policy grows the copy past the stack's depth.
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    StackCopyPolicy policy(StackCopyPolicy::Limits{4096, 8192, 65000});
    pipeline.setStackCopyPolicy(&policy);
    QVERIFY(!policy.decide(0));
    OwnSample cut = deep;
    cut.stack.resize(8192);
    RawSample sample = cut.view();
    sample.stackLimit = 8192;
    pipeline.onSample(sample);
    pipeline.onSample(sample);
    QCOMPARE(recorder.incomplete(), uint64_t(2));
    const auto grown = policy.decide(1);
    QVERIFY(grown);
    QVERIFY2(*grown > 48 * 256 && *grown >= 16384, qPrintable(QString::number(*grown)));
    // A copy that ended short of the limit reached the top of the stack: it was not too small.
    SamplingPipeline other(recorder);
    StackCopyPolicy untouched(StackCopyPolicy::Limits{4096, 16384, 65000});
    other.setStackCopyPolicy(&untouched);
    QVERIFY(!untouched.decide(0));
    sample.stackLimit = 16384;
    other.onSample(sample);
    other.onSample(sample);
    QVERIFY(!untouched.decide(1));
}

QTEST_GUILESS_MAIN(TestSamplingPipeline)

// If this fails, the health view sends users to perf maps for a walk that merely went astray: an incomplete stack
// that ends at an address no mapping holds is "other", and only one that ends in anonymous executable memory is
// "JIT or anonymous code".
void TestSamplingPipeline::strayAddressIsNotCalledJitCode()
{
    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    const size_t other = static_cast<size_t>(UnwindCause::Other);
    const size_t jit = static_cast<size_t>(UnwindCause::JitOrAnonymous);
    // Anonymous executable memory, as a JIT makes it, mapped before the pipeline first reads /proc/self/maps.
    void *code = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    QVERIFY(code != MAP_FAILED);
    static const uint8_t kRet = 0xc3;
    std::memcpy(code, &kRet, 1);

    // A walk with nowhere to go: no frame pointer and a zeroed stack, so its one frame is where it ends.
    const auto lostAt = [](uint64_t ip) {
        OwnSample s = sampleNow();
        const uint64_t sp = s.regs[RegSP];
        std::fill(s.regs.begin(), s.regs.end(), 0);
        s.regs[RegIP] = ip;
        s.regs[RegSP] = sp;
        s.stack.assign(256, 0);
        return s;
    };
    pipeline.setStackCopyBytes(32768);    // the copy of 256 bytes reached the top of the stack: not too small
    const OwnSample stray = lostAt(0x10); // below every mapping
    pipeline.onSample(stray.view());
    const ModuleUnwindCounters &unknown = pipeline.unwindCounters().byModule.at(kUnknownModule);
    QCOMPARE(unknown.incomplete, uint64_t(1));
    QCOMPARE(unknown.causes[other], uint64_t(1));
    QCOMPARE(unknown.causes[jit], uint64_t(0));

    const OwnSample jitted = lostAt(reinterpret_cast<uint64_t>(code));
    pipeline.onSample(jitted.view());
    ::munmap(code, 4096);
    const uint32_t anon = pipeline.moduleIdAt(static_cast<uint32_t>(::getpid()), jitted.regs[RegIP]);
    QVERIFY(anon != kUnknownModule);
    const ModuleUnwindCounters &anonCounters = pipeline.unwindCounters().byModule.at(anon);
    QCOMPARE(anonCounters.causes[jit], uint64_t(1));
    QCOMPARE(pipeline.unwindCounters().incomplete, uint64_t(2));
}

#include "tst_sampling_pipeline.moc"
