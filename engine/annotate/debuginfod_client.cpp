#include "engine/annotate/debuginfod_client.h"

#include "engine/symbols/debuginfod_api.h"

#include <QCoreApplication>
#include <QThread>

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace emberline::engine {
namespace {

bool onGuiThread()
{
    // The engine does not link QtGui: a QGuiApplication is recognised by its meta-object.
    const QCoreApplication *app = QCoreApplication::instance();
    return app != nullptr && app->inherits("QGuiApplication") && QThread::currentThread() == app->thread();
}

bool isHex(const std::string &text)
{
    return !text.empty() && text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

} // namespace

DebuginfodClient::DebuginfodClient() = default;

DebuginfodClient::~DebuginfodClient()
{
    if (m_client != nullptr)
        debuginfodApi()->end(m_client);
}

bool DebuginfodClient::configured()
{
    const char *urls = std::getenv("DEBUGINFOD_URLS");
    return urls != nullptr && *urls != '\0';
}

Result<std::string> DebuginfodClient::findExecutable(const std::string &buildId)
{
    return find(Kind::Executable, buildId);
}

Result<std::string> DebuginfodClient::findDebuginfo(const std::string &buildId)
{
    return find(Kind::Debuginfo, buildId);
}

Result<std::string> DebuginfodClient::find(Kind kind, const std::string &buildId)
{
    if (!configured())
        return makeError(Error::Code::Unsupported, "debuginfod: DEBUGINFOD_URLS is not set");
    if (!isHex(buildId))
        return makeError(Error::Code::Invalid, "debuginfod: no build id to ask for");
    if (onGuiThread())
        return makeError(Error::Code::Internal, "debuginfod is never queried on the GUI thread");
    std::string why = "the client could not start";
    const DebuginfodApi *api = debuginfodApi(&why);
    if (m_client == nullptr && api != nullptr)
        m_client = api->begin();
    if (m_client == nullptr)
        return makeError(Error::Code::Internal, "debuginfod: " + why);
    const auto *id = reinterpret_cast<const unsigned char *>(buildId.c_str());
    char *path = nullptr;
    // A build id length of 0 means a hex string.
    const int fd = kind == Kind::Executable ? api->findExecutable(m_client, id, 0, &path)
                                            : api->findDebuginfo(m_client, id, 0, &path);
    const char *what = kind == Kind::Executable ? "executable" : "debug info";
    if (fd < 0) {
        std::free(path);
        return makeError(Error::Code::Io, std::string("debuginfod: no ") + what + " for build id " + buildId + " (" +
                                              std::strerror(-fd) + ")");
    }
    ::close(fd);
    std::string found = path != nullptr ? path : "";
    std::free(path);
    if (found.empty())
        return makeError(Error::Code::Io, std::string("debuginfod: the ") + what + " came without a path");
    return found;
}

} // namespace emberline::engine
