// Capture and replay of a real program: cpu_split is recorded with the real perf sampler while everything it
// delivers goes to a sample log (CapturingSampler); the log is then replayed (ReplaySampler) through a fresh
// unwinder, recorder and exporter, long after the program has exited. The two profiles must agree: the replay is
// what lets the engine's tests and benchmarks run a real program's samples without a kernel.
#include "tests/engine/session/session_test_support.h"

#include "engine/sampler/replay_sampler.h"

#include <QTemporaryDir>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

// Per function name: self and total samples.
std::map<std::string, std::pair<int64_t, int64_t>> byFunction(const Profile &p)
{
    const FrameTable frames(p);
    const int type = p.sampleTypeIndex("cpu-samples");
    const auto perStack = valuesPerStack(p, type, {});
    const auto table = FunctionTable::build(p, frames, perStack);
    std::map<std::string, std::pair<int64_t, int64_t>> out;
    for (const auto &row : table->rows()) {
        auto &[self, total] = out[frames.frame(row.frame).name];
        self += row.self;
        total += row.total;
    }
    return out;
}

} // namespace

class TestReplaySession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init() { REQUIRE_PERF_EVENTS(); }
    void replayEqualsTheRecording();
};

// If this fails, a replayed session is not the session it was captured from: the sample log loses records, or
// the pipeline depends on the live process for something the sampler's records do not carry.
void TestReplaySession::replayEqualsTheRecording()
{
    QTemporaryDir dir;
    const std::string log = dir.filePath(QStringLiteral("cpu_split.samples")).toStdString();
    SessionConfig config = launch({targetPath("cpu_split"), QStringLiteral("2")});
    config.sampler = "perf";
    config.outputDirectory = dir.filePath(QStringLiteral("live")).toStdString();
    RecordSession live(config, [&log](const SessionConfig &c, int child, std::string &choice) {
        auto inner = openSystemSampler(c, child, choice);
        if (!inner)
            return inner;
        auto writer = SampleLogWriter::create(log);
        if (!writer)
            return Result<std::unique_ptr<Sampler>>(writer.error());
        return Result<std::unique_ptr<Sampler>>(
            std::make_unique<CapturingSampler>(std::move(inner).value(), std::move(writer).value()));
    });
    std::atomic<bool> stop{false};
    auto recorded = live.run(stop);
    QVERIFY2(recorded.ok(), recorded.ok() ? "" : recorded.error().message.c_str());
    QVERIFY(recorded.value().samples > 500);
    auto liveProfile = readPprofFile(recorded.value().sessionProfilePath);
    QVERIFY(liveProfile.ok());

    SessionConfig replayConfig;
    replayConfig.pid = getpid(); // the recorded program is gone; the replay's "target" is only kept alive
    replayConfig.outputDirectory = dir.filePath(QStringLiteral("replay")).toStdString();
    RecordSession replay(replayConfig, [&log](const SessionConfig &, int, std::string &) {
        auto s = ReplaySampler::open(log, {512, false});
        if (!s)
            return Result<std::unique_ptr<Sampler>>(s.error());
        return Result<std::unique_ptr<Sampler>>(std::unique_ptr<Sampler>(std::move(s).value()));
    });
    auto replayed = replay.run(stop);
    QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().message.c_str());
    QCOMPARE(replayed.value().samples, recorded.value().samples);
    QCOMPARE(replayed.value().incomplete, recorded.value().incomplete);
    auto replayProfile = readPprofFile(replayed.value().sessionProfilePath);
    QVERIFY(replayProfile.ok());
    const auto a = byFunction(liveProfile.value());
    const auto b = byFunction(replayProfile.value());
    QVERIFY(a.count("hot_sixty") && a.at("hot_sixty").second > 100);
    QCOMPARE(b, a);
}

QTEST_GUILESS_MAIN(TestReplaySession)
#include "tst_replay_session.moc"
