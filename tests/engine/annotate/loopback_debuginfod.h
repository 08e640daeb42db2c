#pragma once

// Debian's `debuginfod` started on loopback over a folder of ELF files, and a fake server that answers every
// request with the same bytes (garbage, or the file of another build): what the debuginfod tests serve from.

#include <QByteArray>
#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QThread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <atomic>
#include <thread>
#include <vector>

namespace emberline::test {

// A port the kernel says is free now (bound to port 0, then released for the server).
inline int freePort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    ::close(fd);
    return port;
}

// The HTTP status line of GET `path` on the loopback server, empty when it does not answer.
inline QByteArray httpStatus(int port, const QByteArray &path)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    QByteArray reply;
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0) {
        const QByteArray request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if (::write(fd, request.constData(), static_cast<size_t>(request.size())) == request.size()) {
            char buffer[256];
            const ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n > 0)
                reply = QByteArray(buffer, static_cast<int>(n)).split('\r').first();
        }
    }
    ::close(fd);
    return reply;
}

// `debuginfod -F folder` on a free loopback port, ready once it serves `buildId`'s debug info.
class LoopbackDebuginfod {
public:
    ~LoopbackDebuginfod() { stop(); }

    static QString executable() { return QStandardPaths::findExecutable(QStringLiteral("debuginfod")); }

    // Whether the server serves `buildId` within 30 s; `database` is its sqlite file.
    bool start(const QString &folder, const QString &database, const std::string &buildId)
    {
        m_port = freePort();
        if (m_port <= 0)
            return false;
        m_server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_server.start(executable(), {QStringLiteral("-p"), QString::number(m_port), QStringLiteral("-d"), database,
                                      QStringLiteral("-F"), folder});
        if (!m_server.waitForStarted())
            return false;
        const QByteArray path = "/buildid/" + QByteArray::fromStdString(buildId) + "/debuginfo";
        QElapsedTimer timer;
        timer.start();
        while (!httpStatus(m_port, path).contains("200") && timer.elapsed() < 30000 &&
               m_server.state() == QProcess::Running)
            QThread::msleep(100);
        return httpStatus(m_port, path).contains("200");
    }

    void stop()
    {
        if (m_server.state() != QProcess::NotRunning) {
            m_server.terminate();
            m_server.waitForFinished(10000);
        }
    }

    int port() const { return m_port; }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }

private:
    QProcess m_server;
    int m_port = 0;
};

// An HTTP server on a loopback port that answers every request with 200 and the same body, on its own thread.
// With `stallAfter` >= 0 it sends that many bytes of the body and then nothing more until it is destroyed: a
// slow server, as a client sees it.
class FixedAnswerServer {
public:
    explicit FixedAnswerServer(QByteArray body, qsizetype stallAfter = -1)
        : m_body(std::move(body)), m_stallAfter(stallAfter)
    {
        m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (::bind(m_listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
            ::listen(m_listener, 8) != 0 ||
            ::getsockname(m_listener, reinterpret_cast<sockaddr *>(&address), &length) != 0)
            return;
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~FixedAnswerServer()
    {
        m_stopping = true;
        ::shutdown(m_listener, SHUT_RDWR);
        if (m_thread.joinable())
            m_thread.join();
        for (std::thread &connection : m_connections)
            connection.join();
        ::close(m_listener);
    }
    FixedAnswerServer(const FixedAnswerServer &) = delete;
    FixedAnswerServer &operator=(const FixedAnswerServer &) = delete;

    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }
    int requests() const { return m_requests.load(); }

private:
    // Every connection is answered alike, each on a thread of its own, as a real server answers a client's
    // retry while an earlier transfer still stalls.
    void serve()
    {
        while (!m_stopping) {
            const int fd = ::accept(m_listener, nullptr, nullptr);
            if (fd < 0)
                return;
            m_connections.emplace_back([this, fd] { answer(fd); });
        }
    }

    void answer(int fd)
    {
        {
            QByteArray request;
            char buffer[1024];
            while (!request.contains("\r\n\r\n")) {
                const ssize_t n = ::read(fd, buffer, sizeof buffer);
                if (n <= 0)
                    break;
                request.append(buffer, static_cast<int>(n));
            }
            ++m_requests;
            const QByteArray reply = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
                                     QByteArray::number(m_body.size()) + "\r\nConnection: close\r\n\r\n" +
                                     (m_stallAfter >= 0 ? m_body.left(m_stallAfter) : m_body);
            for (qsizetype written = 0; written < reply.size();) {
                // No SIGPIPE when the client has given up and closed (a stalled transfer's timeout).
                const ssize_t n =
                    ::send(fd, reply.constData() + written, static_cast<size_t>(reply.size() - written), MSG_NOSIGNAL);
                if (n <= 0)
                    break;
                written += n;
            }
            while (m_stallAfter >= 0 && !m_stopping)
                QThread::msleep(20);
            ::close(fd);
        }
    }

    QByteArray m_body;
    qsizetype m_stallAfter = -1;
    int m_listener = -1;
    int m_port = 0;
    std::atomic<bool> m_stopping{false};
    std::atomic<int> m_requests{0};
    std::thread m_thread;
    std::vector<std::thread> m_connections; // touched by m_thread only, joined after it
};

} // namespace emberline::test
