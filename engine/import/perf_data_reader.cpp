#include "engine/import/perf_data_reader.h"

#include "engine/import/import_logging.h"
#include "engine/import/perf_script_reader.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>

namespace emberline::engine {
namespace {

constexpr qint64 kChunkBytes = 1 << 20;
constexpr size_t kStderrTail = 4096;

// Splits the child's output into lines as it arrives and feeds them to the parser.
class LineFeeder {
public:
    explicit LineFeeder(PerfScriptParser &parser) : m_parser(parser) {}

    Status add(const QByteArray &chunk, bool atEnd)
    {
        m_pending.append(chunk.constData(), static_cast<size_t>(chunk.size()));
        size_t pos = 0;
        for (;;) {
            const size_t nl = m_pending.find('\n', pos);
            if (nl == std::string::npos)
                break;
            if (Status s = m_parser.feed(std::string_view(m_pending).substr(pos, nl - pos), ++m_lines); !s)
                return s;
            pos = nl + 1;
        }
        m_pending.erase(0, pos);
        if (atEnd && !m_pending.empty())
            return m_parser.feed(m_pending, ++m_lines);
        return Ok{};
    }

private:
    PerfScriptParser &m_parser;
    std::string m_pending;
    size_t m_lines = 0;
};

void keepTail(std::string &tail, const QByteArray &more)
{
    tail.append(more.constData(), static_cast<size_t>(more.size()));
    if (tail.size() > kStderrTail)
        tail.erase(0, tail.size() - kStderrTail);
}

Error stop(QProcess &perf, Error error)
{
    perf.kill();
    perf.waitForFinished(5000);
    return error;
}

} // namespace

std::string perfProgram()
{
    const QString fromEnv = qEnvironmentVariable("EMBERLINE_PERF");
    if (!fromEnv.isEmpty())
        return QStandardPaths::findExecutable(fromEnv).toStdString();
    return QStandardPaths::findExecutable(QStringLiteral("perf")).toStdString();
}

Result<Profile> readPerfDataFile(const std::string &path, const PprofReadOptions &options)
{
    const std::string program = perfProgram();
    if (program.empty())
        return makeError(Error::Code::Unsupported,
                         path + " is a perf.data file, which Emberline reads with `perf script`, and perf is not "
                                "installed: install it with `apt install linux-perf` (Debian, Ubuntu: linux-tools)");
    QProcess perf;
    perf.start(QString::fromStdString(program), {QStringLiteral("script"), QStringLiteral("--no-inline"),
                                                 QStringLiteral("-i"), QString::fromStdString(path)});
    if (!perf.waitForStarted(10000))
        return makeError(Error::Code::Io, "cannot run " + program + ": " + perf.errorString().toStdString());
    QElapsedTimer timer;
    timer.start();
    PerfScriptParser parser(path + " (perf script)");
    LineFeeder feeder(parser);
    std::string stderrTail;
    for (;;) {
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            return stop(perf, makeError(Error::Code::Cancelled, "cancelled"));
        const bool running = perf.state() != QProcess::NotRunning;
        if (running && perf.bytesAvailable() == 0)
            perf.waitForReadyRead(100);
        keepTail(stderrTail, perf.readAllStandardError());
        const QByteArray chunk = perf.read(kChunkBytes);
        if (Status s = feeder.add(chunk, !running && perf.bytesAvailable() == 0); !s)
            return stop(perf, s.error());
        if (!running && perf.bytesAvailable() == 0)
            break;
    }
    keepTail(stderrTail, perf.readAllStandardError());
    if (perf.exitStatus() != QProcess::NormalExit || perf.exitCode() != 0)
        return makeError(Error::Code::Format, "`perf script -i " + path + "` failed (exit " +
                                                  std::to_string(perf.exitCode()) + "): " + stderrTail);
    qCDebug(lcImport) << "perf script of" << QString::fromStdString(path) << "parsed in" << timer.elapsed() << "ms,"
                      << parser.samples() << "samples";
    return parser.finish();
}

} // namespace emberline::engine
