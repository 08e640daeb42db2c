// The one list of a session's flush consumers (engine/flush/flush_consumers.h), which `emberline record` and the
// window both fill: every flush to every consumer in the order added, and the target to the consumers that describe
// it, including those added while the session runs.
#include "engine/flush/flush_consumers.h"

#include <QTest>

#include <string>
#include <vector>

using namespace emberline::engine;

// Writes down what it is given, as "<name> flush <sequence>" and "<name> target <pid> <executable>".
class Recording : public FlushConsumer {
public:
    Recording(std::string name, std::vector<std::string> &log) : m_name(std::move(name)), m_log(log) {}
    void addFlush(std::shared_ptr<const Flush> flush) override
    {
        m_log.push_back(m_name + " flush " + std::to_string(flush->sequence));
    }
    void setTarget(int pid, const std::string &executable) override
    {
        m_log.push_back(m_name + " target " + std::to_string(pid) + " " + executable);
    }

private:
    std::string m_name;
    std::vector<std::string> &m_log;
};

static std::shared_ptr<const Flush> flushNumber(uint32_t sequence)
{
    auto flush = std::make_shared<Flush>();
    flush->sequence = sequence;
    return flush;
}

class TestFlushConsumers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a flush would miss the uploader or the views, reach one twice, or reach them in another order
    // than the session's (the uploader numbers flushes in the order it is given them).
    void everyFlushGoesToEveryConsumerInOrder()
    {
        std::vector<std::string> log;
        FlushConsumers consumers;
        consumers.add(std::make_shared<Recording>("upload", log));
        consumers.add([&](const std::shared_ptr<const Flush> &f) {
            log.push_back("print flush " + std::to_string(f->sequence));
        });
        consumers.add(std::shared_ptr<FlushConsumer>()); // nothing to add
        consumers.add(FlushConsumers::Function());
        consumers.addFlush(flushNumber(1));
        consumers.addFlush(flushNumber(2));
        QCOMPARE(log, (std::vector<std::string>{"upload flush 1", "print flush 1", "upload flush 2", "print flush 2"}));
    }

    // The target goes to the consumers there are, and one added later (an uploader given to a running session) learns
    // the newest at once and takes the flushes from then on. If this fails, uploads from a window whose upload was
    // turned on late carry no process id or the command instead of the executable.
    void aConsumerAddedLateLearnsTheTargetAndTakesLaterFlushes()
    {
        std::vector<std::string> log;
        FlushConsumers consumers;
        consumers.add(std::make_shared<Recording>("stage", log));
        consumers.setTarget(42, "./cpu_split");
        consumers.addFlush(flushNumber(1));
        consumers.setTarget(42, "");
        consumers.add(std::make_shared<Recording>("late", log));
        consumers.addFlush(flushNumber(2));
        QCOMPARE(log, (std::vector<std::string>{"stage target 42 ./cpu_split", "stage flush 1", "stage target 42 ",
                                                "late target 42 ", "stage flush 2", "late flush 2"}));
    }

    // Before any target is announced, adding a consumer tells it nothing. If this fails, an uploader would take pid 0
    // as its target's.
    void noTargetBeforeOneIsAnnounced()
    {
        std::vector<std::string> log;
        FlushConsumers consumers;
        consumers.add(std::make_shared<Recording>("upload", log));
        QVERIFY(log.empty());
    }
};

QTEST_GUILESS_MAIN(TestFlushConsumers)
#include "tst_flush_consumers.moc"
