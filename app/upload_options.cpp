#include "app/upload_options.h"

#include "engine/upload/api_key_store.h"
#include "engine/upload/upload_settings.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace emberline::app {
namespace {

std::optional<std::string> valueOf(const QCommandLineParser &parser, const QCommandLineOption &option)
{
    if (!parser.isSet(option))
        return std::nullopt;
    return parser.value(option).toStdString();
}

// The key when it is not in the environment: the named file, or the one the settings dialog saved.
engine::Result<std::optional<std::string>> apiKeyFromFile(const QCommandLineParser &parser,
                                                          const UploadOptions &options)
{
    if (std::getenv("DD_API_KEY") && *std::getenv("DD_API_KEY"))
        return std::optional<std::string>();
    std::string path = parser.value(options.apiKeyFile).toStdString();
    if (path.empty()) {
        path = engine::defaultApiKeyPath();
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            return std::optional<std::string>();
    }
    auto key = engine::readApiKeyFile(path);
    if (!key)
        return key.error();
    return std::optional<std::string>(std::move(key).value());
}

} // namespace

UploadOptions::UploadOptions()
    : upload(QStringLiteral("upload"), QStringLiteral("Also send every flush to Datadog (the agent, or the intake with "
                                                      "--agentless); settings follow DD_* variables.")),
      service(QStringLiteral("service"),
              QStringLiteral("Datadog service tag (default DD_SERVICE, else the "
                             "program's name)."),
              QStringLiteral("NAME")),
      env(QStringLiteral("env"), QStringLiteral("Datadog env tag (default DD_ENV)."), QStringLiteral("ENV")),
      version(QStringLiteral("version"), QStringLiteral("Datadog version tag (default DD_VERSION)."),
              QStringLiteral("VERSION")),
      tags(QStringLiteral("tags"), QStringLiteral("More tags, key:value separated by commas, added to DD_TAGS."),
           QStringLiteral("TAGS")),
      agentless(QStringLiteral("agentless"), QStringLiteral("Send straight to https://intake.profile.<DD_SITE> with "
                                                            "an API key instead of through the agent.")),
      apiKeyFile(QStringLiteral("api-key-file"),
                 QStringLiteral("Read the API key (agentless) from FILE, which only "
                                "its owner may read (default: DD_API_KEY, or the key "
                                "saved by the GUI)."),
                 QStringLiteral("FILE"))
{
}

QList<QCommandLineOption> UploadOptions::all() const
{
    return {upload, service, env, version, tags, agentless, apiKeyFile};
}

engine::Result<std::unique_ptr<RecordUpload>> RecordUpload::create(const QCommandLineParser &parser,
                                                                   const UploadOptions &options)
{
    if (!parser.isSet(options.upload))
        return std::unique_ptr<RecordUpload>();
    engine::UploadOverrides overrides;
    overrides.service = valueOf(parser, options.service);
    overrides.env = valueOf(parser, options.env);
    overrides.version = valueOf(parser, options.version);
    overrides.tags = valueOf(parser, options.tags);
    if (parser.isSet(options.agentless))
        overrides.mode = engine::UploadMode::Agentless;
    const bool agentless =
        parser.isSet(options.agentless) ||
        (std::getenv("DD_PROFILING_AGENTLESS") && std::string(std::getenv("DD_PROFILING_AGENTLESS")) != "0" &&
         std::string(std::getenv("DD_PROFILING_AGENTLESS")) != "false");
    if (agentless) {
        auto key = apiKeyFromFile(parser, options);
        if (!key)
            return key.error();
        overrides.apiKey = key.value();
    }
    auto settings = engine::resolveUploadSettings(engine::processEnvironment(), overrides);
    if (!settings)
        return settings.error();
    auto uploader = engine::SessionUploader::create(
        std::move(settings).value(), [](const std::shared_ptr<const engine::UploadRecord> &r) { print(*r); });
    if (!uploader)
        return uploader.error();
    std::unique_ptr<RecordUpload> upload(new RecordUpload(std::move(uploader).value()));
    std::fprintf(stderr, "emberline: uploading each flush to %s\n", upload->m_uploader->endpoint().describe().c_str());
    return upload;
}

void RecordUpload::print(const engine::UploadRecord &r)
{
    if (r.outcome == engine::UploadOutcome::Sent)
        std::fprintf(stderr, "emberline: upload of flush %u: HTTP %ld, %.1f KiB in %.0f ms%s\n", r.flushSequence,
                     r.httpStatus, r.bodyBytes / 1024.0, r.requestLatencyNs / 1e6,
                     r.retries() ? (" after " + std::to_string(r.retries()) + " retries").c_str() : "");
    else
        std::fprintf(stderr, "emberline: upload of flush %u %s: %s\n", r.flushSequence, engine::outcomeName(r.outcome),
                     r.message.c_str());
}

void RecordUpload::finish()
{
    const auto &s = m_uploader->settings();
    const int waitMs = std::min(30'000, s.timeoutMs * std::max(1, s.maxAttempts) + 2'000);
    m_uploader->finish(std::chrono::milliseconds(waitMs));
    const engine::UploaderCounters c = m_uploader->counters();
    std::fprintf(stderr,
                 "emberline: uploaded %llu of %llu flushes to %s (%llu refused, %llu failed, %llu dropped, %llu not "
                 "sent, %llu retries)\n",
                 static_cast<unsigned long long>(c.sent), static_cast<unsigned long long>(c.submitted),
                 m_uploader->endpoint().describe().c_str(), static_cast<unsigned long long>(c.rejected),
                 static_cast<unsigned long long>(c.failed), static_cast<unsigned long long>(c.dropped),
                 static_cast<unsigned long long>(c.cancelled), static_cast<unsigned long long>(c.retries));
}

} // namespace emberline::app
