#pragma once

#include "engine/common/result.h"
#include "engine/sampler/sample_sink.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace emberline::engine {

// A file of what a sampler delivered, record by record (samples with their registers, stack copies and kernel
// callchains, memory maps, thread names, forks, exits, context switches, lost counts), so that a session captured
// from a real program can be replayed later through the real unwinder, recorder and exporter without perf
// events, ptrace or the program itself (ReplaySampler). The format is Emberline's own and versioned by its magic line;
// integers are little-endian as this machine writes them.
//
// SampleLogWriter is a SampleSink that writes each callback and forwards it to the next sink unchanged.
//
// Thread: the thread that drains the sampler (the session thread).
class SampleLogWriter final : public SampleSink {
public:
    static Result<std::unique_ptr<SampleLogWriter>> create(const std::string &path);
    ~SampleLogWriter() override;
    SampleLogWriter(const SampleLogWriter &) = delete;
    SampleLogWriter &operator=(const SampleLogWriter &) = delete;

    // The sink every record is forwarded to after it is written (may change between drains; null: none).
    void setNext(SampleSink *next) { m_next = next; }
    // Flushes and closes the file; reports the first write error, if any.
    Status close();
    uint64_t records() const { return m_records; }

    void onSample(const RawSample &sample) override;
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                std::string_view path) override;
    void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) override;
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override;
    void onExit(uint32_t pid, uint32_t tid) override;
    void onLost(uint64_t count) override;
    void onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted) override;

private:
    SampleLogWriter(std::FILE *file, std::string path);
    void begin(uint8_t type);
    void put(const void *data, size_t size); // appends to the record being built
    void writeRaw(const void *data, size_t size);
    template <typename T> void putValue(T value) { put(&value, sizeof value); }
    void end();

    std::FILE *m_file;
    std::string m_path;
    SampleSink *m_next = nullptr;
    std::vector<uint8_t> m_record;
    uint64_t m_records = 0;
    int m_error = 0;
};

// Reads a sample log back, streaming, and hands its records to a sink in the order they were written.
//
// Thread: any, one at a time.
class SampleLogReader {
public:
    static Result<std::unique_ptr<SampleLogReader>> open(const std::string &path);
    ~SampleLogReader();
    SampleLogReader(const SampleLogReader &) = delete;
    SampleLogReader &operator=(const SampleLogReader &) = delete;

    // Delivers up to `maxRecords` records; 0 once the log is at its end. A cut or corrupt record is an error
    // that names the file and the offset; the records before it were delivered.
    Result<size_t> deliver(SampleSink &sink, size_t maxRecords);
    bool atEnd() const { return m_atEnd; }
    uint64_t delivered() const { return m_delivered; }

private:
    SampleLogReader(std::FILE *file, std::string path, uint64_t offset);
    // false at a clean end of the file; an error for a cut or corrupt record.
    Result<bool> deliverOne(SampleSink &sink);
    Error corrupt(const std::string &what) const;

    std::FILE *m_file;
    std::string m_path;
    uint64_t m_offset = 0;
    uint64_t m_delivered = 0;
    bool m_atEnd = false;
    std::vector<uint8_t> m_record;
    std::vector<uint64_t> m_regs;
    std::vector<uint64_t> m_kernelStack;
    bool m_kernelStacks = true; // the log's samples carry their kernel callchain (version 2 on)
    bool m_inodes = true;       // the log's mappings carry the mapped file's inode (version 3 on)
    bool m_stackLimits = false; // version 4: each sample says the stack copy it asked for
};

} // namespace emberline::engine
