// The uploader against a real HTTP receiver on 127.0.0.1 (and on a unix socket): every request is taken apart
// as the intake would (multipart, magic-byte decompression, pprof decoding) and checked against the wire
// spec's section 6; then the faults: refused connections, 5xx then success, 4xx, a stalled agent, a full queue.

#include "tests/engine/upload/loopback_server.h"
#include "tests/engine/upload/upload_checks.h"
#include "tests/engine/upload/upload_test_support.h"

#include "engine/upload/http_transport.h"
#include "engine/upload/uploader.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::engine;
using namespace emberline::test;

namespace {

const std::string kApiKey = "0123456789abcdef0123456789abcdef";

std::unique_ptr<Uploader> makeUploader(const UploadSettings &s, RecordSink &sink)
{
    auto u = Uploader::create(s, sink.callback());
    if (!u)
        qFatal("uploader: %s", u.error().message.c_str());
    return std::move(u).value();
}

QByteArray fileHash(const QString &path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

} // namespace

class TestUploader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, Datadog would not accept or not understand what Emberline sends: the layout, the
    // compression, the tags or the times differ from what the intake expects.
    void wireFormatMatchesTheSpec()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        RecordSink sink;
        UploadSettings s = loopbackSettings(server.url());
        s.apiKey = kApiKey; // must never leave the process in agent mode
        auto uploader = makeUploader(s, sink);
        uploader->submit(makeFlush(1), UploadTarget{4242, "/opt/shop/bin/checkout"});
        QVERIFY(sink.waitFor(1, 10'000));
        QVERIFY(server.waitForRequests(1, 1000));

        const CapturedRequest r = server.requests().at(0);
        QCOMPARE(QString::fromStdString(r.path), QStringLiteral("/profiling/v1/input"));
        QCOMPARE(QString::fromStdString(r.header("dd-evp-origin")), QStringLiteral("emberline"));
        QVERIFY(r.header("content-type").rfind("multipart/form-data; boundary=", 0) == 0);
        const Received got = checkRequest(r, kApiKey, false);
        QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));

        QCOMPARE(got.tag(QStringLiteral("service")), QStringLiteral("checkout"));
        QCOMPARE(got.tag(QStringLiteral("env")), QStringLiteral("test"));
        QCOMPARE(got.tag(QStringLiteral("version")), QStringLiteral("1.2.3"));
        QCOMPARE(got.tag(QStringLiteral("language")), QStringLiteral("native"));
        QCOMPARE(got.tag(QStringLiteral("process_id")), QStringLiteral("4242"));
        QCOMPARE(got.tag(QStringLiteral("profile_seq")), QStringLiteral("0"));
        QCOMPARE(got.tag(QStringLiteral("profiler_version")), QStringLiteral(EMBERLINE_VERSION));
        QCOMPARE(got.tag(QStringLiteral("team")), QStringLiteral("payments"));
        QCOMPARE(got.tag(QStringLiteral("region")), QStringLiteral("eu:west"));
        QVERIFY(!got.tag(QStringLiteral("host")).isEmpty());
        QCOMPARE(got.tag(QStringLiteral("runtime-id")).size(), 36);
        QVERIFY(got.tags.last().startsWith(QStringLiteral("runtime_platform:")));
        QVERIFY(got.tags.last().endsWith(QStringLiteral("-unknown-linux-gnu")));
        // libdatadog's order: additional files first, profile.pprof last.
        QCOMPARE(got.event.value(QStringLiteral("attachments")).toArray().last().toString(),
                 QStringLiteral("profile.pprof"));

        QVERIFY(got.profile.has_value());
        QVERIFY(got.profile->findString("hot_sixty") != 0);
        QCOMPARE(got.profile->sampleCount(), size_t(1));

        const QJsonArray provenance =
            QJsonDocument::fromJson(QByteArray::fromStdString(got.attachments.at("code-provenance.json")))
                .object()
                .value(QStringLiteral("v1"))
                .toArray();
        QMap<QString, QString> kindOf;
        for (const QJsonValue &v : provenance)
            kindOf[v[QStringLiteral("name")].toString()] = v[QStringLiteral("kind")].toString();
        QCOMPARE(kindOf.value(QStringLiteral("checkout"), QStringLiteral("?")), QString());
        QCOMPARE(kindOf.value(QStringLiteral("libc")), QStringLiteral("standard library"));
        QCOMPARE(kindOf.value(QStringLiteral("libstdc++")), QStringLiteral("standard library"));
        QCOMPARE(kindOf.value(QStringLiteral("qt")), QStringLiteral("library"));
        QCOMPARE(kindOf.value(QStringLiteral("libcurl")), QStringLiteral("library"));

        const auto record = sink.snapshot().at(0);
        QCOMPARE(record->outcome, UploadOutcome::Sent);
        QCOMPARE(record->httpStatus, 202L);
        QCOMPARE(record->attempts, 1);
        QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(record->eventJson)).object(), got.event);
        QCOMPARE(record->attachments.size(), size_t(2));
        QVERIFY(record->bodyBytes > 0);
    }

    // If this fails, a second flush of the same process would restart its sequence or change its runtime-id,
    // and Datadog would see a new process each time.
    void sequenceAndRuntimeIdPerProcess()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStatuses({200});
        RecordSink sink;
        auto uploader = makeUploader(loopbackSettings(server.url()), sink);
        uploader->submit(makeFlush(1), UploadTarget{100, {}});
        uploader->submit(makeFlush(2), UploadTarget{100, {}});
        uploader->submit(makeFlush(3), UploadTarget{200, {}});
        QVERIFY(server.waitForRequests(3, 10'000));
        QVERIFY(uploader->finish(std::chrono::seconds(5)));
        std::map<QString, QStringList> seqByPid, idByPid;
        for (const auto &r : server.requests()) {
            const Received got = checkRequest(r);
            QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));
            seqByPid[got.tag(QStringLiteral("process_id"))] << got.tag(QStringLiteral("profile_seq"));
            idByPid[got.tag(QStringLiteral("process_id"))] << got.tag(QStringLiteral("runtime-id"));
        }
        QCOMPARE(seqByPid[QStringLiteral("100")], QStringList({QStringLiteral("0"), QStringLiteral("1")}));
        QCOMPARE(seqByPid[QStringLiteral("200")], QStringList({QStringLiteral("0")}));
        QCOMPARE(idByPid[QStringLiteral("100")].at(0), idByPid[QStringLiteral("100")].at(1));
        QVERIFY(idByPid[QStringLiteral("100")].at(0) != idByPid[QStringLiteral("200")].at(0));
    }

    // A short final flush (Flush::upload false) is left out: not sent, not counted, and the process's sequence
    // goes on as if it had not been there. If this fails, the tail of every session is uploaded as a profile of
    // a few hundred milliseconds, which Datadog's profilers never send.
    void shortFinalFlushIsNotUploaded()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStatuses({200});
        RecordSink sink;
        auto uploader = makeUploader(loopbackSettings(server.url()), sink);
        auto tail = std::make_shared<Flush>(*makeFlush(2));
        tail->final = true;
        tail->upload = false;
        uploader->submit(makeFlush(1), UploadTarget{100, {}});
        uploader->submit(tail, UploadTarget{100, {}});
        uploader->submit(makeFlush(3), UploadTarget{100, {}});
        QVERIFY(server.waitForRequests(2, 10'000));
        QVERIFY(uploader->finish(std::chrono::seconds(5)));
        QCOMPARE(server.requests().size(), size_t(2));
        QCOMPARE(uploader->counters().submitted, uint64_t(2));
        QStringList seq;
        for (const auto &r : server.requests())
            seq << checkRequest(r).tag(QStringLiteral("profile_seq"));
        QCOMPARE(seq, QStringList({QStringLiteral("0"), QStringLiteral("1")}));
    }

    // If this fails, the gzip codec (the spec's alternative to zstd) sends something the intake cannot read.
    void gzipCodec()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        RecordSink sink;
        UploadSettings s = loopbackSettings(server.url());
        s.codec = UploadCodec::Gzip;
        auto uploader = makeUploader(s, sink);
        uploader->submit(makeFlush(1));
        QVERIFY(server.waitForRequests(1, 10'000));
        const CapturedRequest r = server.requests().at(0);
        const Received got = checkRequest(r);
        QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));
        for (const Part &p : parseMultipart(r.header("content-type"), r.body)) {
            if (p.name != "event")
                QCOMPARE(static_cast<unsigned char>(p.data[0]), static_cast<unsigned char>(0x1f));
        }
    }

    // If this fails, an agent on a unix socket (DD_TRACE_AGENT_URL=unix://..., or the default socket) gets
    // nothing.
    void unixSocketAgent()
    {
        QTemporaryDir dir;
        const std::string socketPath = dir.filePath(QStringLiteral("apm.socket")).toStdString();
        LoopbackServer server;
        QVERIFY(server.listenUnix(socketPath));
        RecordSink sink;
        auto uploader = makeUploader(loopbackSettings("unix://" + socketPath), sink);
        uploader->submit(makeFlush(1));
        QVERIFY(server.waitForRequests(1, 10'000));
        const CapturedRequest r = server.requests().at(0);
        QCOMPARE(QString::fromStdString(r.path), QStringLiteral("/profiling/v1/input"));
        QCOMPARE(QString::fromStdString(r.header("host")), QStringLiteral("localhost"));
        const Received got = checkRequest(r);
        QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));
        QVERIFY(sink.waitFor(1, 5000));
        QCOMPARE(sink.snapshot().at(0)->outcome, UploadOutcome::Sent);
        QCOMPARE(QString::fromStdString(sink.snapshot().at(0)->endpoint), QString::fromStdString("unix:" + socketPath));
    }

    // If this fails, a missing agent is either retried forever or reported without telling the user where
    // Emberline looked and what to set.
    void connectionRefused()
    {
        RecordSink sink;
        UploadSettings s = loopbackSettings("http://127.0.0.1:" + std::to_string(closedPort()));
        s.maxAttempts = 3;
        auto uploader = makeUploader(s, sink);
        uploader->submit(makeFlush(1));
        QVERIFY(sink.waitFor(1, 10'000));
        const auto r = sink.snapshot().at(0);
        QCOMPARE(r->outcome, UploadOutcome::Failed);
        QCOMPARE(r->attempts, 3);
        QCOMPARE(r->httpStatus, 0L);
        QVERIFY2(r->message.find("could not reach the Datadog agent") != std::string::npos, r->message.c_str());
        QVERIFY2(r->message.find("DD_TRACE_AGENT_URL") != std::string::npos, r->message.c_str());
        QCOMPARE(uploader->counters().failed, uint64_t(1));
        QCOMPARE(uploader->counters().retries, uint64_t(2));
    }

    // If this fails, a transient agent error loses a flush that a retry would have delivered.
    void serverErrorThenSuccess()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStatuses({500, 200});
        RecordSink sink;
        auto uploader = makeUploader(loopbackSettings(server.url()), sink);
        uploader->submit(makeFlush(1));
        QVERIFY(sink.waitFor(1, 10'000));
        const auto r = sink.snapshot().at(0);
        QCOMPARE(r->outcome, UploadOutcome::Sent);
        QCOMPARE(r->httpStatus, 200L);
        QCOMPARE(r->attempts, 2);
        QCOMPARE(r->retries(), 1);
        QCOMPARE(server.requests().size(), size_t(2));
        // The retry sends the same flush: same sequence, same event.
        QCOMPARE(server.requests()[0].body.size(), server.requests()[1].body.size());
    }

    // If this fails, a request the intake refuses (4xx) is retried for nothing, or the user is not told what
    // to fix.
    void clientErrorsAreNotRetried_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("advice");
        QTest::newRow("413 too large") << 413 << QStringLiteral("too large");
        QTest::newRow("404 old agent") << 404 << QStringLiteral("7.20");
        QTest::newRow("403 api key") << 403 << QStringLiteral("API key");
    }
    void clientErrorsAreNotRetried()
    {
        QFETCH(int, status);
        QFETCH(QString, advice);
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStatuses({status});
        RecordSink sink;
        auto uploader = makeUploader(loopbackSettings(server.url()), sink);
        uploader->submit(makeFlush(1));
        QVERIFY(sink.waitFor(1, 10'000));
        const auto r = sink.snapshot().at(0);
        QCOMPARE(r->outcome, UploadOutcome::Rejected);
        QCOMPARE(r->httpStatus, long(status));
        QCOMPARE(r->attempts, 1);
        QVERIFY2(QString::fromStdString(r->message).contains(advice), r->message.c_str());
        QTest::qWait(300); // a retry, had there been one, would have arrived by now (backoff 50 ms)
        QCOMPARE(server.requests().size(), size_t(1));
    }

    // If this fails, an agent that accepts the connection and never answers holds the uploader (and the
    // flushes behind it) for longer than the timeout.
    void stalledServerTimesOut()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStallMs(4000);
        RecordSink sink;
        UploadSettings s = loopbackSettings(server.url());
        s.timeoutMs = 400;
        s.maxAttempts = 2;
        auto uploader = makeUploader(s, sink);
        QElapsedTimer clock;
        clock.start();
        uploader->submit(makeFlush(1));
        QVERIFY(sink.waitFor(1, 10'000));
        const auto r = sink.snapshot().at(0);
        QCOMPARE(r->outcome, UploadOutcome::Failed);
        QCOMPARE(r->attempts, 2);
        QVERIFY2(r->message.find("no answer") != std::string::npos, r->message.c_str());
        QVERIFY2(clock.elapsed() < 3000, qPrintable(QString::number(clock.elapsed())));
        server.setStallMs(0);
    }

    // If this fails, a dead agent makes sampling wait, memory grow, or local flush files change: the queue
    // must stay bounded, drop the oldest, count every drop and report every flush exactly once.
    void queueFillsWhileServerIsDown()
    {
        QTemporaryDir dir;
        std::vector<std::shared_ptr<const Flush>> flushes;
        std::vector<QByteArray> hashes;
        for (uint32_t i = 1; i <= 8; ++i) {
            const QString path = dir.filePath(QStringLiteral("flush-%1.pprof").arg(i));
            auto flush = makeFlush(i, path.toStdString());
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(flush->pprofBytes));
            f.close();
            hashes.push_back(fileHash(path));
            flushes.push_back(flush);
        }
        RecordSink sink;
        UploadSettings s = loopbackSettings("http://127.0.0.1:" + std::to_string(closedPort()));
        s.queueCapacity = 2;
        s.maxAttempts = 3;
        s.backoffMs = 200;
        auto uploader = makeUploader(s, sink);
        QElapsedTimer clock;
        clock.start();
        for (const auto &f : flushes)
            uploader->submit(f);
        const qint64 submitMs = clock.elapsed();
        QVERIFY2(submitMs < 200, qPrintable(QStringLiteral("submitting 8 flushes took %1 ms").arg(submitMs)));
        QVERIFY(sink.waitFor(8, 20'000));
        const UploaderCounters c = uploader->counters();
        QCOMPARE(c.submitted, uint64_t(8));
        QVERIFY2(c.dropped >= 5, qPrintable(QString::number(c.dropped))); // 1 in flight, 2 waiting
        QCOMPARE(c.dropped + c.failed, uint64_t(8));
        std::set<uint32_t> seen;
        size_t droppedRecords = 0;
        for (const auto &r : sink.snapshot()) {
            QVERIFY2(seen.insert(r->flushSequence).second, "a flush was reported twice");
            droppedRecords += r->outcome == UploadOutcome::Dropped;
            if (r->outcome == UploadOutcome::Dropped)
                QVERIFY(r->message.find("queue was full") != std::string::npos);
        }
        QCOMPARE(droppedRecords, size_t(c.dropped));
        QCOMPARE(seen.count(8), size_t(1));
        for (uint32_t i = 1; i <= 8; ++i)
            QCOMPARE(fileHash(dir.filePath(QStringLiteral("flush-%1.pprof").arg(i))), hashes[i - 1]);
    }

    // If this fails, stopping a session waits on a dead agent, or flushes never tried vanish without a trace.
    void finishIsBoundedAndReportsTheRest()
    {
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        server.setStallMs(5000);
        RecordSink sink;
        UploadSettings s = loopbackSettings(server.url());
        s.timeoutMs = 10'000;
        auto uploader = makeUploader(s, sink);
        uploader->submit(makeFlush(1));
        uploader->submit(makeFlush(2));
        QVERIFY(server.waitForRequests(1, 5000));
        QElapsedTimer clock;
        clock.start();
        QVERIFY(!uploader->finish(std::chrono::milliseconds(300)));
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(sink.waitFor(2, 1000));
        for (const auto &r : sink.snapshot())
            QCOMPARE(r->outcome, UploadOutcome::Cancelled);
        server.setStallMs(0);
    }

    // If this fails, the API key could travel in clear text or to an agent: agentless requests must be
    // HTTPS-only and carry the key only in DD-API-KEY; records shown to the user hide it.
    void agentlessIsHttpsOnlyAndHidesTheKey()
    {
        UploadSettings s;
        s.mode = UploadMode::Agentless;
        s.site = "datadoghq.eu";
        s.apiKey = kApiKey;
        auto endpoint = uploadEndpoint(s);
        QVERIFY(endpoint.ok());
        QCOMPARE(QString::fromStdString(endpoint->url),
                 QStringLiteral("https://intake.profile.datadoghq.eu/api/v2/profile"));
        QVERIFY(endpoint->agentless);
        bool keyHeader = false;
        for (const auto &[name, value] : uploadHeaders(s, endpoint.value(), 0, true))
            keyHeader |= name == "DD-API-KEY" && value == kApiKey;
        QVERIFY(keyHeader);
        for (const auto &[name, value] : uploadHeaders(s, endpoint.value(), 0, false))
            QVERIFY(value.find(kApiKey) == std::string::npos);

        // Pointed at plain HTTP, an agentless request is refused by the transport before anything is sent.
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        UploadEndpoint plain{server.url() + "/api/v2/profile", {}, true};
        auto payload = buildUploadPayload(*makeFlush(1), {{"service", "x"}}, PayloadContext{});
        QVERIFY(payload.ok());
        const HttpResult r = postPayload(plain, uploadHeaders(s, plain, 0, true), payload.value(), 1000, 1000, nullptr);
        QVERIFY(r.networkError);
        QTest::qWait(200);
        QCOMPARE(server.requests().size(), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestUploader)
#include "tst_uploader.moc"
