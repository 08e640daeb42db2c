// End to end: a real target (cpu_split) profiled by the real sampler with a 1 s flush period while the
// session's uploader (a SessionUploader among the session's flush consumers, as `record --upload` and the window
// have it) sends every flush to a loopback receiver; each request must be what Datadog expects and hold the
// target's hot function and the right tags.

#include "tests/engine/session/perf_guard.h"
#include "tests/engine/upload/loopback_server.h"
#include "tests/engine/upload/upload_checks.h"
#include "tests/engine/upload/upload_test_support.h"

#include "engine/session/record_session.h"
#include "engine/upload/session_uploader.h"

#include <QTemporaryDir>
#include <QTest>

using namespace emberline::engine;
using namespace emberline::test;

class TestUploadSession : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, profiles recorded with upload on do not reach Datadog one per flush, decodable, with
    // the target's functions, its pid, and a profile_seq that counts from 0.
    void everyFlushArrives()
    {
        REQUIRE_PERF_EVENTS();
        LoopbackServer server;
        QVERIFY(server.listenTcp());
        RecordSink sink;
        UploadSettings settings = loopbackSettings(server.url());
        settings.service.clear(); // the default: the target's executable name
        auto uploader = SessionUploader::create(settings, sink.callback());
        QVERIFY(uploader.ok());

        QTemporaryDir dir;
        SessionConfig config;
        const std::string target = EMBERLINE_BINARY_DIR "/tests/targets/cpu_split";
        config.command = {target, "4.5"};
        config.flushPeriodNs = 1'000'000'000;
        config.outputDirectory = dir.path().toStdString();
        std::atomic<int> targetPid{0};
        std::atomic<int> flushes{0}; // the ones for upload: a final flush under the minimum is kept but not sent
        SessionControl control;
        RecordSession session(config);
        RecordSession::Callbacks callbacks;
        callbacks.onStats = [&](const SessionStats &s) { targetPid = s.targetPid; };
        // The session tells the uploader the target (pid, then the executable /proc names once it has run).
        callbacks.consumers = std::make_shared<FlushConsumers>();
        callbacks.consumers->add(uploader.value());
        callbacks.consumers->add([&](const std::shared_ptr<const Flush> &f) {
            if (f->upload)
                ++flushes;
        });
        auto result = session.run(control, callbacks);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QVERIFY(uploader.value()->finish(std::chrono::seconds(20)));

        const int n = flushes.load();
        QVERIFY2(n >= 3, qPrintable(QStringLiteral("only %1 flushes").arg(n)));
        const auto requests = server.requests();
        QCOMPARE(int(requests.size()), n);
        QCOMPARE(int(uploader.value()->counters().sent), n);
        QStringList seqs;
        for (const CapturedRequest &r : requests) {
            const Received got = checkRequest(r);
            QVERIFY2(got.failures.isEmpty(), qPrintable(got.failures.join(QStringLiteral("; "))));
            QCOMPARE(got.tag(QStringLiteral("service")), QStringLiteral("cpu_split"));
            QCOMPARE(got.tag(QStringLiteral("env")), QStringLiteral("test"));
            QCOMPARE(got.tag(QStringLiteral("process_id")), QString::number(targetPid.load()));
            QCOMPARE(got.tag(QStringLiteral("language")), QStringLiteral("native"));
            seqs << got.tag(QStringLiteral("profile_seq"));
            QVERIFY(got.profile.has_value());
            QVERIFY2(got.profile->findString("hot_sixty") != 0, "hot_sixty is not in the uploaded profile");
            QVERIFY(got.profile->sampleCount() > 0);
            const QString provenance = QString::fromStdString(got.attachments.at("code-provenance.json"));
            QVERIFY2(provenance.contains(QStringLiteral("{\"kind\":\"\",\"name\":\"cpu_split\"")),
                     qPrintable(provenance));
            QVERIFY2(provenance.contains(QStringLiteral("standard library")), qPrintable(provenance));
        }
        QStringList expected;
        for (int i = 0; i < n; ++i)
            expected << QString::number(i);
        QCOMPARE(seqs, expected);
    }
};

QTEST_GUILESS_MAIN(TestUploadSession)
#include "tst_upload_session.moc"
