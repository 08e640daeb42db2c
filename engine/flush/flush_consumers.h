#pragma once

#include "engine/flush/flush.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace emberline::engine {

// What takes a session's flushes once the exporter has written them: the live stage (the window), the uploader, the
// lines `emberline record` prints. A consumer queues the flush for its own thread, or does something as quick, and
// returns: the exporter thread that calls it never waits on the network or the views.
//
// Thread: addFlush() on the exporter thread, once per reported flush, in sequence; setTarget() on the session thread,
// or on the thread that adds the consumer to a running session.
class FlushConsumer {
public:
    virtual ~FlushConsumer() = default;
    virtual void addFlush(std::shared_ptr<const Flush> flush) = 0;
    // The process the session records: its pid and its executable, which is a launched program's command until it has
    // run, and empty afterwards (/proc names it then). Only consumers that describe the target (the uploader) listen.
    virtual void setTarget(int pid, const std::string &executable)
    {
        (void)pid;
        (void)executable;
    }
};

// The one list of a session's flush consumers, which `emberline record` (RecordSession) and the window
// (ProfilingSession) both fill and the exporter thread feeds: each flush goes to every consumer, in the order they
// were added. A consumer added while the session runs takes the flushes from then on and is told the target at once.
//
// Thread: every member may be called from any thread; see FlushConsumer for where the consumers are called.
class FlushConsumers : public FlushConsumer {
public:
    using Function = std::function<void(std::shared_ptr<const Flush>)>;

    void add(std::shared_ptr<FlushConsumer> consumer)
    {
        if (!consumer)
            return;
        std::lock_guard lock(m_mutex);
        if (m_target)
            consumer->setTarget(m_target->first, m_target->second);
        m_consumers.push_back(std::move(consumer));
    }
    // A function as a consumer (tests, `emberline record`'s printer).
    void add(Function function)
    {
        if (function)
            add(std::make_shared<FunctionConsumer>(std::move(function)));
    }

    void addFlush(std::shared_ptr<const Flush> flush) override
    {
        for (const std::shared_ptr<FlushConsumer> &consumer : consumers())
            consumer->addFlush(flush);
    }
    // Tells every consumer, and remembers it for those added later. Under the lock, so that a consumer being added
    // meanwhile learns the newest target last.
    void setTarget(int pid, const std::string &executable) override
    {
        std::lock_guard lock(m_mutex);
        m_target.emplace(pid, executable);
        for (const std::shared_ptr<FlushConsumer> &consumer : m_consumers)
            consumer->setTarget(pid, executable);
    }

private:
    class FunctionConsumer : public FlushConsumer {
    public:
        explicit FunctionConsumer(Function function) : m_function(std::move(function)) {}
        void addFlush(std::shared_ptr<const Flush> flush) override { m_function(std::move(flush)); }

    private:
        Function m_function;
    };

    // A copy, so that no consumer is called under the lock.
    std::vector<std::shared_ptr<FlushConsumer>> consumers() const
    {
        std::lock_guard lock(m_mutex);
        return m_consumers;
    }

    mutable std::mutex m_mutex;
    std::vector<std::shared_ptr<FlushConsumer>> m_consumers;
    std::optional<std::pair<int, std::string>> m_target;
};

} // namespace emberline::engine
