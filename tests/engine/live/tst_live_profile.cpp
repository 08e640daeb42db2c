// The live accumulator (LiveProfile) and its derivations (selection weights, activity buckets) on synthetic
// flushes, where every number is known.
#include "tests/engine/live/synthetic_flush.h"

#include "engine/flush/exporter.h"
#include "engine/live/live_profile.h"
#include "engine/live/live_selection.h"
#include "engine/model/sample_filter.h"
#include "engine/model/thread_state.h"
#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <map>
#include <random>

using namespace emberline::engine;
using emberline::test::syntheticFlush;

namespace {

// A sample's place in an aggregate told by names, whatever the order of the aggregate's tables: its labels and
// its frames' function names, leaf first.
std::string sampleKey(const Profile &p, size_t i)
{
    std::string key;
    for (const Label &l : p.sampleLabels(i))
        key += p.str(l.key) + "=" + (l.str ? p.str(l.str) : std::to_string(l.num)) + " ";
    key += "|";
    for (uint32_t loc : p.sample(i).locations) {
        for (const Line &line : p.locations()[loc].lines)
            key += p.str(p.functions()[line.functionIndex].name) + ";";
    }
    return key;
}

// Everything the views read from a snapshot, by names: per sample its values, thread, hits and CPU; per stack
// its values; the timeline, flush by flush.
struct AggregateByNames {
    std::map<std::string, std::vector<int64_t>> samples;
    std::map<std::string, std::vector<int64_t>> stacks;
    std::vector<std::string> timeline;
};

// The first difference between two aggregates, or nothing.
std::string difference(const AggregateByNames &a, const AggregateByNames &b)
{
    const auto firstOf = [](const std::map<std::string, std::vector<int64_t>> &x,
                            const std::map<std::string, std::vector<int64_t>> &y) -> std::string {
        for (const auto &[key, values] : x) {
            auto it = y.find(key);
            if (it == y.end())
                return "only on one side: " + key;
            if (it->second != values)
                return "other values: " + key;
        }
        return x.size() == y.size() ? std::string() : "more rows on one side";
    };
    if (std::string d = firstOf(a.samples, b.samples); !d.empty())
        return "sample " + d;
    if (std::string d = firstOf(b.samples, a.samples); !d.empty())
        return "sample " + d;
    if (std::string d = firstOf(a.stacks, b.stacks); !d.empty())
        return "stack " + d;
    if (a.timeline != b.timeline)
        return "the timelines differ";
    return {};
}

// `hits`: the live profile's, as of the snapshot.
AggregateByNames byNames(const LiveSnapshot &snap, std::span<const uint32_t> hits)
{
    const Profile &p = *snap.profile;
    AggregateByNames out;
    std::vector<std::string> keys;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        keys.push_back(sampleKey(p, i));
        std::vector<int64_t> row(p.sampleValues(i).begin(), p.sampleValues(i).end());
        row.insert(row.end(), {int64_t(snap.sampleThread()[i]), int64_t(hits[i]), snap.sampleCpuNs(i)});
        out.samples.emplace(keys.back(), row); // one aggregated sample per key (checked by the caller)
        std::string stack = keys.back().substr(keys.back().find('|'));
        std::vector<int64_t> &values = out.stacks[stack];
        values.resize(p.sampleTypes().size(), 0);
        for (size_t t = 0; t < values.size(); ++t)
            values[t] = snap.stackValues(static_cast<int>(t))[p.sampleStackId(i)];
    }
    for (const auto &chunk : snap.chunks) {
        chunk->forEach([&](int64_t timeNs, uint32_t agg) {
            out.timeline.push_back(std::to_string((timeNs - chunk->startNs) / 1'000'000) + " " + keys[agg]);
        });
    }
    return out;
}

// A profile's samples by names (sampleKey), values summed.
std::map<std::string, std::vector<int64_t>> samplesByNames(const Profile &p)
{
    std::map<std::string, std::vector<int64_t>> out;
    for (size_t i = 0; i < p.sampleCount(); ++i) {
        std::vector<int64_t> &sum = out[sampleKey(p, i)];
        const auto values = p.sampleValues(i);
        sum.resize(values.size(), 0);
        for (size_t t = 0; t < values.size(); ++t)
            sum[t] += values[t];
    }
    return out;
}

} // namespace

class TestLiveProfile : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Two synthetic flushes (thread 7 then thread 9, 100 samples each, two stacks): the aggregated profile has
    // 4 samples (2 stacks x 2 threads) without timestamps or thread names (the threads' names are kept once each), the
    // timeline has 200 entries at 6 bytes each, and a range over the first flush weighs thread 7 fully and thread 9 not
    // at all. If this fails, the time-range views or the memory bound of live sessions are wrong.
    void liveProfileAggregatesAndSelectsByTime()
    {
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        QVERIFY(live.add(*syntheticFlush(1, t0, 100, 7)).ok());
        QVERIFY(live.add(*syntheticFlush(2, t0 + 1'000'000'000, 100, 9)).ok());
        const auto snap = live.snapshot();
        QCOMPARE(snap->profile->sampleCount(), size_t(4));
        for (size_t i = 0; i < snap->profile->sampleCount(); ++i)
            QCOMPARE(snap->profile->sampleLabels(i).size(), size_t(1)); // thread id; no timestamp, no name
        QCOMPARE(snap->timelineSamples(), size_t(200));
        QCOMPARE(snap->threads.size(), size_t(2));
        QCOMPARE(snap->threads[0].name, std::string("worker-7"));
        QCOMPARE(snap->chunks[1]->samples, uint64_t(100));

        LiveSelection first;
        first.startNs = t0;
        first.endNs = t0 + 1'000'000'000;
        const auto weights = selectionWeights(*snap, live.sampleHits(), first);
        for (size_t i = 0; i < weights.size(); ++i)
            QCOMPARE(weights[i], snap->sampleThread()[i] == 0 ? 1.0f : 0.0f);

        LiveSelection half = first; // the first half of flush 1: 50 of its 100 samples
        half.endNs = t0 + 500'000'000;
        const auto halfWeights = selectionWeights(*snap, live.sampleHits(), half);
        double kept = 0;
        for (size_t i = 0; i < halfWeights.size(); ++i)
            kept += halfWeights[i] * live.sampleHits()[i];
        QCOMPARE(qRound(kept), 50);

        LiveSelection hidden;
        hidden.hiddenThreads = {1};
        const auto hiddenWeights = selectionWeights(*snap, live.sampleHits(), hidden);
        for (size_t i = 0; i < hiddenWeights.size(); ++i)
            QCOMPARE(hiddenWeights[i], snap->sampleThread()[i] == 1 ? 0.0f : 1.0f);
    }

    // Snapshots share their profile's sample chunks with the live aggregate, which copies a chunk before it
    // writes one a snapshot still holds: a snapshot held across later flushes must stay as it was, and every snapshot's
    // columns must agree with its profile and timeline. If this fails, a view reads columns of another flush than its
    // profile's (wrong threads, CPU or range weights), or a held snapshot changes under a view.
    void snapshotsStayConsistentWhileTheAggregateGrows()
    {
        // `hits`: the live profile's when the snapshot is its newest, else empty (a held snapshot has none).
        const auto check = [](const LiveSnapshot &snap, std::span<const uint32_t> liveHits) {
            const Profile &p = *snap.profile;
            QCOMPARE(snap.sampleThread().size(), p.sampleCount());
            if (!liveHits.empty())
                QCOMPARE(liveHits.size(), p.sampleCount());
            QCOMPARE(snap.totals, p.totals());
            std::vector<uint32_t> hits(p.sampleCount(), 0);
            for (const auto &chunk : snap.chunks)
                chunk->forEach([&](int64_t, uint32_t agg) { hits.at(agg)++; });
            const StringId tidKey = p.findString("thread id");
            for (size_t i = 0; i < p.sampleCount(); ++i) {
                if (!liveHits.empty())
                    QCOMPARE(liveHits[i], hits[i]);
                QCOMPARE(snap.sampleCpuNs(i), p.sampleValues(i)[1]);
                QCOMPARE(snap.threads.at(snap.sampleThread()[i]).tid, p.sampleLabels(i)[0].num);
                QCOMPARE(p.sampleLabels(i)[0].key, tidKey);
            }
            // The session's values per stack, kept flush by flush, are the aggregated profile's.
            for (int t = 0; t < int(p.sampleTypes().size()); ++t) {
                const std::span<const int64_t> kept = snap.stackValues(t);
                const std::vector<int64_t> computed = valuesPerStack(p, t, {});
                QVERIFY(std::equal(kept.begin(), kept.end(), computed.begin(), computed.end()));
            }
            QVERIFY(snap.stackValues(int(p.sampleTypes().size())).empty());
        };
        // Every stack whose value changed since the previous snapshot is named as changed since its flush count.
        // (Values copied, not the snapshot held.)
        const auto checkChanged = [](uint32_t wasFlushes, const std::vector<int64_t> &was, const LiveSnapshot &after) {
            const std::vector<uint32_t> changed = after.stacksChangedSince(wasFlushes);
            QVERIFY(!changed.empty());
            const std::span<const int64_t> now = after.stackValues(0);
            for (uint32_t s = 0; s < now.size(); ++s) {
                if (s >= was.size() || was[s] != now[s])
                    QVERIFY2(std::binary_search(changed.begin(), changed.end(), s), qPrintable(QString::number(s)));
            }
            QVERIFY(after.stacksChangedSince(after.flushes).empty());
        };
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        std::vector<std::pair<std::shared_ptr<const LiveSnapshot>, size_t>> held; // with its sample count then
        std::vector<int64_t> previous; // the last snapshot's values per stack
        for (uint32_t f = 1; f <= 9; ++f) {
            const int64_t tid = 7 + f % 3;
            QVERIFY(live.add(syntheticFlush(f, t0 + f * 1'000'000'000LL, 20 + int(f) * 7, tid)).ok());
            auto snap = live.snapshot();
            check(*snap, live.sampleHits());
            if (f > 1)
                checkChanged(f - 1, previous, *snap);
            previous.assign(snap->stackValues(0).begin(), snap->stackValues(0).end());
            if (f % 3 != 1) // most snapshots are dropped before the next flush; some are held (shared chunks copied)
                held.emplace_back(snap, snap->timelineSamples());
            if (f == 5)
                held.erase(held.begin()); // a held one let go: the aggregate writes its chunks in place again
        }
        for (const auto &[snap, samples] : held) {
            QCOMPARE(snap->timelineSamples(), samples);
            check(*snap, {});
        }
        QCOMPARE(live.snapshot()->timelineSamples(), size_t(9 * 20 + 7 * 45));
    }

    // A snapshot taken for the type the views show holds that type's values per stack alone; values a held
    // snapshot shares stay as they were when later flushes change the aggregate's. If this fails, a view reads
    // values per stack of another type or of a later flush than its profile's.
    void snapshotOfOneTypeHoldsItsValuesAlone()
    {
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        std::vector<std::pair<std::shared_ptr<const LiveSnapshot>, std::vector<int64_t>>> held;
        for (uint32_t f = 1; f <= 6; ++f) {
            QVERIFY(live.add(syntheticFlush(f, t0 + f * 1'000'000'000LL, 30 + int(f) * 5, 7 + f % 2)).ok());
            const int type = int(f % 2);
            const auto snap = live.snapshot(type);
            const Profile &p = *snap->profile;
            QCOMPARE(p.sampleTypes().size(), size_t(2));
            const std::vector<int64_t> computed = valuesPerStack(p, type, {});
            const std::span<const int64_t> kept = snap->stackValues(type);
            QVERIFY(std::equal(kept.begin(), kept.end(), computed.begin(), computed.end()));
            QVERIFY(snap->stackValues(1 - type).empty());
            QCOMPARE(live.snapshot(type), snap); // the same snapshot until the next flush
            const auto byDefault = live.snapshot(LiveProfile::kDefaultType);
            const std::span<const int64_t> shown = byDefault->stackValues(p.defaultSampleTypeIndex());
            const std::vector<int64_t> computedShown = valuesPerStack(p, p.defaultSampleTypeIndex(), {});
            QVERIFY(std::equal(shown.begin(), shown.end(), computedShown.begin(), computedShown.end()));
            held.emplace_back(snap, computed);
        }
        for (const auto &[snap, values] : held) {
            const std::span<const int64_t> kept = snap->stackValues(static_cast<int>(snap->flushes % 2));
            QVERIFY(std::equal(kept.begin(), kept.end(), values.begin(), values.end()));
        }
    }

    // A recorded session through the real recorder and exporter: 12 flushes of random stacks over a named
    // module, the kernel and JIT code whose perf map names more of it from flush 5 on, three threads, two thread
    // states, and a recorder whose stack table starts over every few flushes. One aggregate takes the flushes with
    // their session ids, the other without. If this fails, finding locations and stacks by the recorder's ids sums
    // samples into other call paths than their names say.
    void sessionIdsGiveTheAggregateOfNames()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string mapPath = dir.filePath(QStringLiteral("perf-300.map")).toStdString();
        FILE *map = std::fopen(mapPath.c_str(), "w");
        QVERIFY(map);
        std::fputs("10000 40 JS:*early /tmp/app.js:1:1\n", map);
        std::fflush(map);
        ExporterOptions options;
        options.frequency = 999;
        options.perfMapDirectory = dir.path().toStdString();
        Exporter exporter(options);
        Recorder recorder(400); // a small stack table: it starts over several times in the session
        recorder.registerModule({7, "/nonexistent/libgone.so", "", 0x7000, 0x9000, 0x1000});
        recorder.registerModule({9, "//anon", "", 0x10000, 0x20000, 0});
        for (uint32_t tid : {300u, 301u, 302u})
            recorder.setThreadName(300, tid, "thread-" + std::to_string(tid));
        std::vector<uint32_t> pool;
        for (uint64_t a = 0; a < 24; ++a)
            pool.push_back(recorder.internLocation(7, 0x7000 + 0x40 * a));
        for (uint64_t a = 0; a < 8; ++a)
            pool.push_back(recorder.internLocation(9, 0x10000 + 0x10 * a)); // the map names 0x10000-0x1003f
        pool.push_back(recorder.internLocation(kKernelModule, 0));

        std::mt19937 rng(7);
        LiveProfile withIds, withoutIds;
        // The session's profile.pprof, written a flush at a time, the same two ways.
        PprofStreamWriter fileWithIds(dir.filePath(QStringLiteral("with.pprof")).toStdString(), {"end_timestamp_ns"});
        PprofStreamWriter fileWithoutIds(dir.filePath(QStringLiteral("without.pprof")).toStdString(),
                                         {"end_timestamp_ns"});
        size_t unnamedJit = 0, namedJit = 0;
        const int64_t t0 = 1'700'000'000'000'000'000;
        for (uint32_t f = 0; f < 12; ++f) {
            if (f == 5) {
                std::fputs("10040 40 JS:~late /tmp/app.js:9:1\n", map);
                std::fflush(map);
            }
            const int64_t start = t0 + int64_t(f) * 1'000'000'000;
            std::vector<uint32_t> stack;
            for (int i = 0; i < 300; ++i) {
                stack.clear();
                const size_t depth = 1 + rng() % 6;
                for (size_t d = 0; d < depth; ++d)
                    stack.push_back(pool[rng() % (d == 0 ? pool.size() : 24)]); // JIT and kernel only as the leaf
                recorder.recordTimed(start + int64_t(i) * 3'000'000, 300, 300 + rng() % 3, 1'001'001, 1'001'001,
                                     static_cast<uint8_t>(rng() % 2 ? ThreadState::Running : ThreadState::Sleeping),
                                     true, stack);
            }
            auto exported = exporter.exportFlush(recorder.takeFlush(start, start + 1'000'000'000, f == 11));
            QVERIFY(exported.ok() && exported.value());
            const std::shared_ptr<const Flush> &flush = exported.value();
            QVERIFY(flush->sessionIds);
            for (size_t l = 0; l < flush->profile->locations().size(); ++l) {
                const Location &loc = flush->profile->locations()[l];
                if (loc.mappingIndex != kNoIndex &&
                    flush->profile->str(flush->profile->mappings()[loc.mappingIndex].filename) == "//anon")
                    ++(flush->sessionIds->locations[l] == kNoIndex ? unnamedJit : namedJit);
            }
            QVERIFY(withIds.add(flush).ok());
            QVERIFY(fileWithIds.add(*flush->profile, flush->sessionIds.get()).ok());
            QVERIFY(fileWithoutIds.add(*flush->profile).ok());
            auto copy = std::make_shared<Flush>(*flush);
            copy->sessionIds.reset();
            QVERIFY(withoutIds.add(std::shared_ptr<const Flush>(std::move(copy))).ok());
            const auto a = byNames(*withIds.snapshot(), withIds.sampleHits());
            const auto b = byNames(*withoutIds.snapshot(), withoutIds.sampleHits());
            QCOMPARE(a.samples.size(), withIds.snapshot()->profile->sampleCount());
            QCOMPARE(b.samples.size(), withoutIds.snapshot()->profile->sampleCount());
            const std::string diff = difference(a, b);
            QVERIFY2(diff.empty(), diff.c_str());
        }
        std::fclose(map);
        auto with = fileWithIds.finish(), without = fileWithoutIds.finish();
        QVERIFY(with.ok() && without.ok());
        auto withRead = readPprofFile(with.value()), withoutRead = readPprofFile(without.value());
        QVERIFY(withRead.ok() && withoutRead.ok());
        QCOMPARE(withRead.value().sampleCount(), withoutRead.value().sampleCount());
        QVERIFY(samplesByNames(withRead.value()) == samplesByNames(withoutRead.value()));
        QCOMPARE(withRead.value().totals()[0], int64_t(12 * 300));
        QVERIFY(recorder.stackGeneration() >= 2);
        QVERIFY(unnamedJit > 0); // JIT code no map named yet went by content
        QVERIFY(namedJit > 0);
        QVERIFY(withIds.snapshot()->profile->sampleCount() > 1000);
    }

    // CPU per thread in 250 ms buckets: thread 7 is on CPU 100% in the first second, thread 9 in the second.
    // If this fails, the CPU timeline shows wrong values.
    void activityBucketsGiveCpuPerThread()
    {
        LiveProfile live;
        const int64_t t0 = 1'700'000'000'000'000'000;
        QVERIFY(live.add(*syntheticFlush(1, t0, 100, 7)).ok());
        QVERIFY(live.add(*syntheticFlush(2, t0 + 1'000'000'000, 100, 9)).ok());
        const ThreadActivity a = bucketActivity(*live.snapshot(), live.sampleHits(), 250'000'000);
        QCOMPARE(a.bucketCount, size_t(8));
        QCOMPARE(qRound(a.cpuPercent(0, 1)), 100);
        QCOMPARE(qRound(a.cpuPercent(1, 1)), 0);
        QCOMPARE(qRound(a.cpuPercent(1, 6)), 100);
        QCOMPARE(a.bucketAt(t0 + 600'000'000), size_t(2));
        // 125 ms is not a whole number of bins: the timeline's entries are walked, each with its aggregated
        // sample's CPU time per hit (10 ms). Thread 7's samples fall at 10 ms … 1 s, thread 9's at 1.01 … 2 s.
        const ThreadActivity odd = bucketActivity(*live.snapshot(), live.sampleHits(), 125'000'000);
        QCOMPARE(odd.bucketCount, size_t(16));
        int64_t sums[2] = {0, 0};
        for (size_t b = 0; b < odd.bucketCount; ++b) {
            sums[0] += odd.cpuNs[0][b];
            sums[1] += odd.cpuNs[1][b];
            QCOMPARE(odd.cpuNs[0][b] > 0, b <= 8);
            QCOMPARE(odd.cpuNs[1][b] > 0, b >= 8);
        }
        QCOMPARE(sums[0], int64_t(1'000'000'000));
        QCOMPARE(sums[1], int64_t(1'000'000'000));
        QCOMPARE(odd.cpuNs[0][3], int64_t(120'000'000)); // 380 … 490 ms
        QCOMPARE(chooseBucketNs(2'000'000'000, 400, 0), int64_t(50'000'000));
        QCOMPARE(chooseBucketNs(2'000'000'000, 400, 200'000'000), int64_t(250'000'000));
        QCOMPARE(chooseBucketNs(1800'000'000'000, 400, 0), int64_t(5'000'000'000)); // 30 minutes: 5 s < a flush
    }

    // The packed timeline gives back every entry as it was added: times that go back as well as forward, the
    // first and the last millisecond a flush can hold, and sample indices of every varint length up to the
    // largest. If this fails, time ranges and the heatmap count samples at the wrong time or of the wrong stack.
    void timelineEntriesReadBackAsAdded()
    {
        TimelineChunk chunk;
        chunk.startNs = 5'000'000'000;
        const std::vector<std::pair<uint16_t, uint32_t>> entries = {{0, 0},
                                                                    {3, 127},
                                                                    {2, 128},
                                                                    {2, 16383},
                                                                    {700, 16384},
                                                                    {699, 2'097'151},
                                                                    {40'000, 2'097'152},
                                                                    {12, 268'435'455},
                                                                    {65'535, 268'435'456},
                                                                    {0, UINT32_MAX - 1},
                                                                    {65'535, 7}};
        for (const auto &[offsetMs, sample] : entries)
            chunk.append(offsetMs, sample);
        chunk.finish();
        QCOMPARE(chunk.entryCount(), entries.size());
        QCOMPARE(chunk.lastEntryNs(), chunk.startNs + int64_t(65'535) * 1'000'000);
        size_t i = 0;
        chunk.forEach([&](int64_t timeNs, uint32_t sample) {
            QCOMPARE(timeNs, chunk.startNs + int64_t(entries[i].first) * 1'000'000);
            QCOMPARE(sample, entries[i].second);
            ++i;
        });
        QCOMPARE(i, entries.size());
        QCOMPARE(chunk.entrySamples().back(), uint32_t(7));
        // A millisecond apart and an index under two million: four bytes an entry, not six.
        TimelineChunk dense;
        for (uint32_t k = 0; k < 1000; ++k)
            dense.append(static_cast<uint16_t>(k / 2), 1'000'000 + k * 997);
        dense.finish();
        QVERIFY(dense.memoryBytes() - sizeof(TimelineChunk) <= size_t{4} * 1000);
    }
};

QTEST_GUILESS_MAIN(TestLiveProfile)
#include "tst_live_profile.moc"
