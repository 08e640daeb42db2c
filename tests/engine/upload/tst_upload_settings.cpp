// Upload settings from Datadog's environment variables and explicit choices, DD_TAGS parsing and tag
// validation, the per-flush tag builder, code provenance of native mappings, and the API key file.

#include "tests/engine/upload/upload_test_support.h"

#include "engine/upload/api_key_store.h"
#include "engine/upload/code_provenance.h"
#include "engine/upload/http_transport.h"
#include "engine/upload/tags.h"
#include "engine/upload/upload_payload.h"
#include "engine/upload/upload_settings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <filesystem>
#include <map>

using namespace emberline::engine;

namespace {

EnvLookup fakeEnv(std::map<std::string, std::string> vars)
{
    return [vars](const std::string &name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end() || it->second.empty())
            return std::nullopt;
        return it->second;
    };
}

const char *kNoSocket = "/nonexistent/apm.socket";

} // namespace

class TestUploadSettings : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, Emberline looks for the agent somewhere else than Datadog's tracers do.
    void agentUrlResolution_data()
    {
        QTest::addColumn<QStringList>("env"); // NAME=VALUE pairs
        QTest::addColumn<QString>("url");
        QTest::newRow("default") << QStringList{} << QStringLiteral("http://localhost:8126/profiling/v1/input");
        QTest::newRow("trace agent url wins")
            << QStringList{QStringLiteral("DD_TRACE_AGENT_URL=http://agent.local:9000/"),
                           QStringLiteral("DD_AGENT_HOST=ignored")}
            << QStringLiteral("http://agent.local:9000/profiling/v1/input");
        QTest::newRow("https") << QStringList{QStringLiteral("DD_TRACE_AGENT_URL=https://agent:8126")}
                               << QStringLiteral("https://agent:8126/profiling/v1/input");
        QTest::newRow("unix") << QStringList{QStringLiteral("DD_TRACE_AGENT_URL=unix:///run/dd/apm.sock")}
                              << QStringLiteral("unix:/run/dd/apm.sock");
        QTest::newRow("host only") << QStringList{QStringLiteral("DD_AGENT_HOST=10.0.0.5")}
                                   << QStringLiteral("http://10.0.0.5:8126/profiling/v1/input");
        QTest::newRow("port only") << QStringList{QStringLiteral("DD_TRACE_AGENT_PORT=9126")}
                                   << QStringLiteral("http://localhost:9126/profiling/v1/input");
        QTest::newRow("ipv6 host") << QStringList{QStringLiteral("DD_AGENT_HOST=::1")}
                                   << QStringLiteral("http://[::1]:8126/profiling/v1/input");
        QTest::newRow("empty counts as unset") << QStringList{QStringLiteral("DD_AGENT_HOST=")}
                                               << QStringLiteral("http://localhost:8126/profiling/v1/input");
    }
    void agentUrlResolution()
    {
        QFETCH(QStringList, env);
        QFETCH(QString, url);
        std::map<std::string, std::string> vars;
        for (const QString &kv : env)
            vars[kv.section(QLatin1Char('='), 0, 0).toStdString()] = kv.section(QLatin1Char('='), 1).toStdString();
        auto s = resolveUploadSettings(fakeEnv(vars), {}, kNoSocket);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        auto e = uploadEndpoint(s.value());
        QVERIFY(e.ok());
        QCOMPARE(QString::fromStdString(e->describe()), url);
    }

    // If this fails, an agent listening only on its default socket is not found.
    void defaultSocketIsUsedWhenPresent()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("apm.socket")).toStdString();
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        QCOMPARE(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
        auto s = resolveUploadSettings(fakeEnv({}), {}, path);
        close(fd);
        QVERIFY(s.ok());
        QCOMPARE(QString::fromStdString(s->agentUrl), QString::fromStdString("unix://" + path));
        auto withHost = resolveUploadSettings(fakeEnv({{"DD_AGENT_HOST", "h"}}), {}, path);
        QCOMPARE(QString::fromStdString(withHost->agentUrl), QStringLiteral("http://h:8126"));
    }

    // If this fails, flags or the dialog cannot override the environment, or bad values pass silently.
    void overridesAndRefusals()
    {
        UploadOverrides o;
        o.service = "from-flag";
        o.agentUrl = "127.0.0.1:7777";
        auto s = resolveUploadSettings(
            fakeEnv({{"DD_SERVICE", "from-env"}, {"DD_ENV", "prod"}, {"DD_TRACE_AGENT_URL", "http://x:1"}}), o,
            kNoSocket);
        QVERIFY(s.ok());
        QCOMPARE(QString::fromStdString(s->service), QStringLiteral("from-flag"));
        QCOMPARE(QString::fromStdString(s->env), QStringLiteral("prod"));
        QCOMPARE(QString::fromStdString(s->agentUrl), QStringLiteral("http://127.0.0.1:7777"));

        auto badPort = resolveUploadSettings(fakeEnv({{"DD_TRACE_AGENT_PORT", "80a"}}), {}, kNoSocket);
        QVERIFY(!badPort.ok());
        QVERIFY(badPort.error().message.find("DD_TRACE_AGENT_PORT") != std::string::npos);
        auto badUrl = resolveUploadSettings(fakeEnv({{"DD_TRACE_AGENT_URL", "ftp://x"}}), {}, kNoSocket);
        QVERIFY(!badUrl.ok());
        QVERIFY(badUrl.error().message.find("DD_TRACE_AGENT_URL") != std::string::npos);
        auto badService = resolveUploadSettings(fakeEnv({{"DD_SERVICE", "a,b"}}), {}, kNoSocket);
        QVERIFY(!badService.ok());
        QVERIFY(badService.error().message.find("comma") != std::string::npos);
    }

    // If this fails, agentless mode could send to a wrong host, over HTTP, or with a malformed key; or an API
    // key would appear in an error message.
    void agentless()
    {
        const std::string key = "abcdefabcdefabcdefabcdefabcdef12";
        auto s = resolveUploadSettings(
            fakeEnv({{"DD_PROFILING_AGENTLESS", "true"}, {"DD_SITE", "datadoghq.eu"}, {"DD_API_KEY", key}}), {},
            kNoSocket);
        QVERIFY(s.ok());
        QCOMPARE(s->mode, UploadMode::Agentless);
        QCOMPARE(QString::fromStdString(uploadEndpoint(s.value())->url),
                 QStringLiteral("https://intake.profile.datadoghq.eu/api/v2/profile"));

        UploadOverrides o;
        o.mode = UploadMode::Agentless;
        auto noKey = resolveUploadSettings(fakeEnv({}), o, kNoSocket);
        QVERIFY(!noKey.ok());
        QVERIFY(noKey.error().message.find("API key") != std::string::npos);
        const std::string badKey = "NOT-A-KEY-secret-value";
        auto bad = resolveUploadSettings(fakeEnv({{"DD_API_KEY", badKey}}), o, kNoSocket);
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find(badKey) == std::string::npos);
        o.site = "https://datadoghq.com/";
        o.apiKey = key;
        auto badSite = resolveUploadSettings(fakeEnv({}), o, kNoSocket);
        QVERIFY(!badSite.ok());
        QVERIFY(badSite.error().message.find("site") != std::string::npos);

        // In agent mode the key is not read: the agent adds its own.
        auto agent = resolveUploadSettings(fakeEnv({{"DD_API_KEY", key}}), {}, kNoSocket);
        QVERIFY(agent.ok());
        QVERIFY(agent->apiKey.empty());
    }

    // If this fails, DD_TAGS is read differently than Datadog's tracers read it.
    void ddTagsParsing()
    {
        auto commas = parseTagList(" team:payments , region:eu:west,bare, deployment.environment:staging ");
        QVERIFY(commas.ok());
        QCOMPARE(commas.tags.size(), size_t(4));
        QCOMPARE(commas.tags[1], (Tag{"region", "eu:west"}));
        QCOMPARE(commas.tags[2], (Tag{"bare", ""}));
        QCOMPARE(commas.tags[3], (Tag{"env", "staging"}));
        auto spaces = parseTagList("a:1 b=2\tc:3");
        QVERIFY(spaces.ok());
        QCOMPARE(spaces.tags.size(), size_t(3));
        QCOMPARE(spaces.tags[1], (Tag{"b", "2"}));

        auto env = resolveUploadSettings(fakeEnv({{"DD_TAGS", "env:from-tags,service:svc"}, {"DD_ENV", "prod"}}), {},
                                         kNoSocket);
        QVERIFY(env.ok());
        QCOMPARE(QString::fromStdString(env->env), QStringLiteral("prod")); // DD_ENV wins over DD_TAGS
        QCOMPARE(QString::fromStdString(env->service), QStringLiteral("svc"));
    }

    // If this fails, a bad tag reaches Datadog (where it is mangled or dropped) instead of being refused with
    // a message naming it and the reason.
    void invalidTagsAreRefusedWithReasons_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reason");
        QTest::newRow("trailing colon") << QStringLiteral("team:") << QStringLiteral("ends with ':'");
        QTest::newRow("digit first") << QStringLiteral("9lives:x") << QStringLiteral("start with a letter");
        QTest::newRow("too long") << (QStringLiteral("k:") + QString(210, QLatin1Char('v')))
                                  << QStringLiteral("200 bytes");
        QTest::newRow("inner space") << QStringLiteral("a:b c,d:e") << QStringLiteral("whitespace");
        QTest::newRow("reserved key") << QStringLiteral("profile_seq:9") << QStringLiteral("sets itself");
    }
    void invalidTagsAreRefusedWithReasons()
    {
        QFETCH(QString, text);
        QFETCH(QString, reason);
        auto r = parseTagList(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.errors[0]).contains(reason), r.errors[0].c_str());
        QVERIFY2(r.errors[0].find("tag '") != std::string::npos, r.errors[0].c_str());
        UploadOverrides o;
        o.tags = text.toStdString();
        auto s = resolveUploadSettings(fakeEnv({}), o, kNoSocket);
        QVERIFY(!s.ok());
        QVERIFY(s.error().message.rfind("tags: ", 0) == 0);
    }

    // If this fails, tags_profiler lacks a tag Datadog's UI relies on, or an empty env overrides the agent's
    // default_env.
    void tagBuilder()
    {
        TagBuilder b(TagBuilder::Identity{"", "", "", "build-host", {{"team", "x"}}});
        const auto first = b.nextFlushTags(77, "cpu_split");
        const std::string text = joinTags(first);
        QVERIFY2(text.rfind("service:cpu_split,host:build-host,language:native,runtime-id:", 0) == 0, text.c_str());
        QVERIFY(text.find("env:") == std::string::npos);
        QVERIFY(text.find(",process_id:77,") != std::string::npos);
        QVERIFY(text.find(",profile_seq:0,") != std::string::npos);
        QVERIFY(text.find(",team:x,runtime_platform:") != std::string::npos);
        QVERIFY(joinTags(b.nextFlushTags(77, "cpu_split")).find(",profile_seq:1,") != std::string::npos);
        for (const Tag &t : first)
            QVERIFY2(validateTag(t).ok(), t.text().c_str());
    }

    // If this fails, Datadog cannot tell the user's code from the C runtime and third-party libraries.
    void codeProvenance()
    {
        auto flush = emberline::test::makeFlush(1);
        CodeProvenanceOptions o;
        o.mainVersion = "1.2.3";
        const auto entries = codeProvenanceEntries(*flush->profile, o);
        std::map<std::string, CodeProvenanceEntry> byName;
        for (const auto &e : entries)
            byName[e.name] = e;
        QCOMPARE(QString::fromStdString(byName["checkout"].kind), QString());
        QCOMPARE(QString::fromStdString(byName["checkout"].version), QStringLiteral("1.2.3"));
        QCOMPARE(byName["checkout"].paths, std::vector<std::string>{"/opt/shop/bin/checkout"});
        QCOMPARE(QString::fromStdString(byName["libc"].kind), QStringLiteral("standard library"));
        QCOMPARE(QString::fromStdString(byName["[vdso]"].kind), QStringLiteral("standard library"));
        QCOMPARE(QString::fromStdString(byName["qt"].kind), QStringLiteral("library"));
        QCOMPARE(QString::fromStdString(byName["libcurl"].version), QStringLiteral("4.8.0"));
        // A real file: the soname link resolves to the full version.
        std::error_code ec;
        const std::string realStdcxx = std::filesystem::canonical("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", ec);
        if (!ec)
            QVERIFY2(byName["libstdc++"].version.size() > 1, byName["libstdc++"].version.c_str());
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(codeProvenanceJson(entries)));
        QVERIFY(doc.object().value(QStringLiteral("v1")).toArray().size() == int(entries.size()));
    }

    // If this fails, Datadog may misread the flush's time window.
    void rfc3339()
    {
        QCOMPARE(QString::fromStdString(rfc3339Utc(1'700'000'000'123'456'789)),
                 QStringLiteral("2023-11-14T22:13:20.123456789Z"));
    }

    // If this fails, the API key could be stored or read where other users can see it.
    void apiKeyFileIsOwnerOnly()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("conf/emberline/datadog-api-key")).toStdString();
        const std::string key = "0123456789abcdef0123456789abcdef";
        QVERIFY(writeApiKeyFile(path, key).ok());
        struct stat st {};
        QCOMPARE(stat(path.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 0777, 0600u);
        auto read = readApiKeyFile(path);
        QVERIFY(read.ok());
        QCOMPARE(read.value(), key);
        chmod(path.c_str(), 0644);
        auto refused = readApiKeyFile(path);
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message.find("chmod 600") != std::string::npos);
        QVERIFY(refused.error().message.find(key) == std::string::npos);
        QVERIFY(removeApiKeyFile(path).ok());
        QVERIFY(!readApiKeyFile(path).ok());
    }

    // If this fails, a profiled process in a container is not attributed to its container.
    void containerIdFromCgroup()
    {
        const std::string id(64, 'a');
        const auto v1 = parseCgroupFile("12:memory:/docker/" + id + "\n0::/\n");
        QCOMPARE(QString::fromStdString(v1.containerId), QString::fromStdString(id));
        QCOMPARE(QString::fromStdString(v1.entityId), QString::fromStdString("cid-" + id));
        const auto scope = parseCgroupFile("0::/system.slice/docker-" + id + ".scope\n");
        QCOMPARE(QString::fromStdString(scope.containerId), QString::fromStdString(id));
        QVERIFY(parseCgroupFile("0::/user.slice/user-0.slice/session-1.scope\n").containerId.empty());
    }
};

QTEST_GUILESS_MAIN(TestUploadSettings)
#include "tst_upload_settings.moc"
