#pragma once

#include "engine/common/result.h"
#include "engine/export/flush.h"
#include "engine/session/record_session.h"
#include "engine/upload/uploader.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>

#include <atomic>
#include <memory>
#include <mutex>
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

// `emberline record --upload`: the uploader fed from the session's flushes, one line per flush on stderr and
// a summary at the end. The API key comes from DD_API_KEY, --api-key-file, or the file the GUI saves it in.
//
// Thread: created on the main thread; submit() on the exporter thread; setTargetPid() on the session thread.
class RecordUpload {
public:
    // nullptr (no error) when --upload is not given.
    static engine::Result<std::unique_ptr<RecordUpload>> create(const QCommandLineParser &parser,
                                                               const UploadOptions &options,
                                                               const engine::SessionConfig &config);
    void setTargetPid(int pid);
    void submit(std::shared_ptr<const engine::Flush> flush);
    // Gives waiting uploads a bounded time to finish, then prints the summary.
    void finish();

private:
    explicit RecordUpload(std::unique_ptr<engine::Uploader> uploader) : m_uploader(std::move(uploader)) {}
    static void print(const engine::UploadRecord &record);

    std::unique_ptr<engine::Uploader> m_uploader;
    std::mutex m_mutex;
    engine::UploadTarget m_target;
};

} // namespace emberline::app
