// Upload cost, side by side in one run: cpu_split alone, profiled with upload off, and profiled with every
// flush uploaded to a loopback receiver (flush period 1 s). Prints the target's own throughput
// (chunks_per_second) and slowdown, the sampling rate and the profiler's CPU for each, and the latency from a
// flush's hand-over (and from the flush's end) to the receiver's answer. Numbers only; nothing is asserted.
//
// Usage: bench_upload [SECONDS per run, default 5] [FREQUENCY, default 99] [ROUNDS, default 2]

#include "tests/engine/upload/loopback_server.h"

#include "engine/session/record_session.h"
#include "engine/upload/uploader.h"

#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace emberline;

namespace {

const std::string kTarget = EMBERLINE_BINARY_DIR "/tests/targets/cpu_split";

double parseThroughput(const std::string &output)
{
    const size_t at = output.find("chunks_per_second ");
    return at == std::string::npos ? 0 : std::stod(output.substr(at + 18));
}

double runAlone(double seconds)
{
    QProcess p;
    p.start(QString::fromStdString(kTarget), {QString::number(seconds)});
    p.waitForFinished(int(seconds * 1000) + 30'000);
    return parseThroughput(p.readAllStandardOutput().toStdString());
}

struct Run {
    double throughput = 0;
    engine::SessionSummary summary;
    std::vector<std::shared_ptr<const engine::UploadRecord>> records;
};

// The target writes its throughput to our stdout: point fd 1 at a file for the session's duration.
Run runProfiled(double seconds, int frequency, const std::string &uploadUrl)
{
    Run run;
    QTemporaryDir dir;
    std::unique_ptr<engine::Uploader> uploader;
    std::mutex mutex;
    if (!uploadUrl.empty()) {
        engine::UploadSettings s;
        s.agentUrl = uploadUrl;
        s.service = "bench";
        uploader = std::move(engine::Uploader::create(s, [&](std::shared_ptr<const engine::UploadRecord> r) {
                                 std::lock_guard lock(mutex);
                                 run.records.push_back(std::move(r));
                             }).value());
    }
    engine::SessionConfig config;
    config.command = {kTarget, std::to_string(seconds)};
    config.frequency = frequency;
    config.flushPeriodNs = 1'000'000'000;
    config.outputDirectory = dir.path().toStdString();
    std::atomic<int> pid{0};
    engine::SessionControl control;
    engine::RecordSession::Callbacks callbacks;
    callbacks.onStats = [&](const engine::SessionStats &s) { pid = s.targetPid; };
    callbacks.consumers = std::make_shared<engine::FlushConsumers>();
    callbacks.consumers->add([&](std::shared_ptr<const engine::Flush> f) {
        if (uploader)
            uploader->submit(std::move(f), engine::UploadTarget{pid.load(), kTarget});
    });
    const std::string outPath = dir.filePath(QStringLiteral("stdout.txt")).toStdString();
    std::fflush(stdout);
    const int saved = dup(1);
    const int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(out, 1);
    close(out);
    auto result = engine::RecordSession(config).run(control, callbacks);
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    if (uploader)
        uploader->finish(std::chrono::seconds(20));
    if (result)
        run.summary = result.value();
    else
        std::fprintf(stderr, "bench_upload: %s\n", result.error().message.c_str());
    std::stringstream text;
    text << std::ifstream(outPath).rdbuf();
    run.throughput = parseThroughput(text.str());
    return run;
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
    const int frequency = argc > 2 ? std::atoi(argv[2]) : 99;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 2;
    test::LoopbackServer server;
    if (!server.listenTcp())
        return 1;

    std::vector<double> alone, off, on, rateOff, rateOn, cpuOff, cpuOn, handToSent, endToSent, request;
    size_t sent = 0, total = 0;
    for (int round = 0; round < rounds; ++round) { // interleaved, so drift hits every mode alike
        alone.push_back(runAlone(seconds));
        Run a = runProfiled(seconds, frequency, {});
        Run b = runProfiled(seconds, frequency, server.url());
        off.push_back(a.throughput);
        on.push_back(b.throughput);
        rateOff.push_back(a.summary.realRateHz);
        rateOn.push_back(b.summary.realRateHz);
        cpuOff.push_back(a.summary.profilerCpuNs / 1e6);
        cpuOn.push_back(b.summary.profilerCpuNs / 1e6);
        for (const auto &r : b.records) {
            ++total;
            if (r->outcome != engine::UploadOutcome::Sent)
                continue;
            ++sent;
            handToSent.push_back(r->flushToSentNs / 1e6);
            endToSent.push_back((r->finishedAtNs - r->flushEndNs) / 1e6);
            request.push_back(r->requestLatencyNs / 1e6);
        }
    }
    const double base = median(alone);
    auto slowdown = [&](double v) { return base > 0 ? 100.0 * (base - v) / base : 0; };
    std::printf("bench_upload: cpu_split %.1f s per run, %d Hz, flush period 1 s, %d round(s)\n", seconds, frequency,
                rounds);
    std::printf("%-22s %18s %10s %14s %16s\n", "mode", "chunks_per_second", "slowdown", "samples/s", "profiler CPU ms");
    std::printf("%-22s %18.1f %9s %14s %16s\n", "alone", base, "-", "-", "-");
    std::printf("%-22s %18.1f %8.2f%% %14.1f %16.1f\n", "profiled, upload off", median(off), slowdown(median(off)),
                median(rateOff), median(cpuOff));
    std::printf("%-22s %18.1f %8.2f%% %14.1f %16.1f\n", "profiled, upload on", median(on), slowdown(median(on)),
                median(rateOn), median(cpuOn));
    std::printf("uploads: %zu of %zu sent to %s (%zu requests received)\n", sent, total, server.url().c_str(),
                server.requests().size());
    if (!request.empty())
        std::printf("latency ms (median / max): hand-over to answer %.2f / %.2f; flush end to answer %.2f / %.2f; "
                    "request alone %.2f / %.2f\n",
                    median(handToSent), *std::max_element(handToSent.begin(), handToSent.end()), median(endToSent),
                    *std::max_element(endToSent.begin(), endToSent.end()), median(request),
                    *std::max_element(request.begin(), request.end()));
    return 0;
}
