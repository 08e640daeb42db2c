#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/session/record_session.h"
#include "engine/upload/session_uploader.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>

#include <memory>
#include <string>

namespace emberline::app {

// The upload flags of `emberline record`: --upload, --service, --env, --version, --tags, --agentless and
// --api-key-file. There is deliberately no flag that takes the API key itself: command lines are visible to
// every user of the machine (ps, /proc/PID/cmdline).
struct UploadOptions {
    UploadOptions();
    QList<QCommandLineOption> all() const;
    QCommandLineOption upload;
    QCommandLineOption service;
    QCommandLineOption env;
    QCommandLineOption version;
    QCommandLineOption tags;
    QCommandLineOption agentless;
    QCommandLineOption apiKeyFile;
};

// `emberline record --upload`: the engine's SessionUploader, which the session feeds from its exporter thread,
// with one line per flush on stderr and a summary at the end. The API key comes from DD_API_KEY, --api-key-file,
// or the file the GUI saves it in.
//
// Thread: created and finished on the main thread; the session submits to uploader() on its exporter thread.
class RecordUpload {
public:
    // nullptr (no error) when --upload is not given.
    static engine::Result<std::unique_ptr<RecordUpload>> create(const QCommandLineParser &parser,
                                                                const UploadOptions &options);
    const std::shared_ptr<engine::SessionUploader> &uploader() const { return m_uploader; }
    // Gives waiting uploads a bounded time to finish, then prints the summary.
    void finish();

private:
    explicit RecordUpload(std::shared_ptr<engine::SessionUploader> uploader) : m_uploader(std::move(uploader)) {}
    static void print(const engine::UploadRecord &record);

    std::shared_ptr<engine::SessionUploader> m_uploader;
};

} // namespace emberline::app
