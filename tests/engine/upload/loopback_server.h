#pragma once

// A small HTTP/1.1 receiver for upload tests: listens on 127.0.0.1 (an ephemeral port) or on a unix socket,
// records every request (method, path, headers, body) and answers with scripted status codes, optionally
// after stalling. One connection at a time, on its own thread; every wait is bounded.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace emberline::test {

struct CapturedRequest {
    std::string method;
    std::string path;
    std::map<std::string, std::string> headers; // keys lowercased
    std::string head;                           // the raw request line and headers
    std::string body;
    std::string header(const std::string &name) const
    {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

class LoopbackServer {
public:
    ~LoopbackServer() { stop(); }

    bool listenTcp()
    {
        m_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(m_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(m_fd, 16) != 0)
            return false;
        socklen_t len = sizeof a;
        getsockname(m_fd, reinterpret_cast<sockaddr *>(&a), &len);
        m_port = ntohs(a.sin_port);
        start();
        return true;
    }

    bool listenUnix(const std::string &path)
    {
        m_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        unlink(path.c_str());
        if (bind(m_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(m_fd, 16) != 0)
            return false;
        start();
        return true;
    }

    int port() const { return m_port; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

    // Status codes for the next requests, in order; the last one repeats. Default: 202, as the intake answers.
    void setStatuses(std::vector<int> statuses)
    {
        std::lock_guard lock(m_mutex);
        m_statuses = std::move(statuses);
    }
    // Wait this long after reading a request before answering (a stalled agent).
    void setStallMs(int ms) { m_stallMs = ms; }

    std::vector<CapturedRequest> requests() const
    {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }
    bool waitForRequests(size_t n, int timeoutMs)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return m_requests.size() >= n; });
    }

    void stop()
    {
        if (!m_thread.joinable())
            return;
        m_stop = true;
        m_thread.join();
        close(m_fd);
    }

private:
    void start()
    {
        m_thread = std::thread([this] { loop(); });
    }

    void loop()
    {
        while (!m_stop) {
            pollfd p{m_fd, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0)
                continue;
            const int client = accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0)
                continue;
            serve(client);
            close(client);
        }
    }

    // Reads until `want` bytes are buffered or the peer stops sending for 5 s.
    bool readMore(int fd, std::string &buffer)
    {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            return false;
        char chunk[65536];
        const ssize_t n = read(fd, chunk, sizeof chunk);
        if (n <= 0)
            return false;
        buffer.append(chunk, static_cast<size_t>(n));
        return true;
    }

    void serve(int fd)
    {
        std::string buffer;
        size_t headEnd = std::string::npos;
        while ((headEnd = buffer.find("\r\n\r\n")) == std::string::npos) {
            if (!readMore(fd, buffer))
                return;
        }
        CapturedRequest r;
        r.head = buffer.substr(0, headEnd);
        const size_t lineEnd = r.head.find("\r\n");
        const std::string line = r.head.substr(0, lineEnd);
        r.method = line.substr(0, line.find(' '));
        r.path = line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
        size_t pos = lineEnd + 2;
        while (pos < r.head.size()) {
            size_t end = r.head.find("\r\n", pos);
            if (end == std::string::npos)
                end = r.head.size();
            const std::string h = r.head.substr(pos, end - pos);
            const size_t colon = h.find(':');
            if (colon != std::string::npos) {
                std::string key = h.substr(0, colon);
                std::transform(key.begin(), key.end(), key.begin(), ::tolower);
                r.headers[key] = h.substr(h.find_first_not_of(' ', colon + 1));
            }
            pos = end + 2;
        }
        const size_t length = std::stoul(r.header("content-length").empty() ? "0" : r.header("content-length"));
        buffer.erase(0, headEnd + 4);
        while (buffer.size() < length) {
            if (!readMore(fd, buffer))
                return;
        }
        r.body = buffer.substr(0, length);
        int status = 202;
        {
            std::lock_guard lock(m_mutex);
            if (!m_statuses.empty())
                status = m_statuses[std::min(m_requests.size(), m_statuses.size() - 1)];
            m_requests.push_back(std::move(r));
        }
        m_changed.notify_all();
        const auto stallUntil = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_stallMs.load());
        while (!m_stop && std::chrono::steady_clock::now() < stallUntil)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::string response = "HTTP/1.1 " + std::to_string(status) +
                                     " Scripted\r\nContent-Length: 2\r\n"
                                     "Connection: close\r\n\r\n{}";
        (void)!write(fd, response.data(), response.size());
    }

    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_stallMs{0};
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<int> m_statuses;
    std::vector<CapturedRequest> m_requests;
    std::thread m_thread;
};

} // namespace emberline::test
