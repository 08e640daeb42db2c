// python_host LIBPYTHON SCRIPT: embeds the CPython of LIBPYTHON (opened with dlopen, called through dlsym: no
// Python header) and runs SCRIPT (python_walk.py) in it, for tst_agent_python. The agent's target is found as the
// session finds it (inspectPythonImage on the library with its load bias, choosePythonLayout; 3.13's debug offsets
// read from the start of _PyRuntime in this process). At each of the script's probes, a call from Python through
// ctypes, the host walks its own thread's Python frames with the agent's walk, names each frame from the facts the
// agent gives (pythonCodeFacts, then the line table decoded at the frame's instruction) and prints them after the
// truth the script handed over:
//
//   probe LABEL / truth NAME FILE LINE EXPECT (the script's) / walk NAME FILE LINE ENTRY (the agent's) /
//   flags N / end
//
// Then `timing FRAMES MEDIAN_NS P99_NS` for 1000 walks of a 100-deep recursion, and `nothread FRAMES FLAGS` for a
// walk from a thread of the host that Python never saw. Exits 0 when the script ran.

#include "engine/agent/python/agent_python.h"
#include "engine/python/python_image.h"
#include "engine/python/python_layout_choice.h"
#include "engine/python/python_lines.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

using namespace emberline;

namespace {

agent::PythonTarget g_target;
thread_local agent::PythonThreadCache t_cache{};

// The characters of a string pythonCodeFacts gave, `kind` bytes each, as UTF-8.
std::string utf8Of(const uint8_t *data, uint32_t bytes, uint8_t kind)
{
    std::string out;
    for (uint32_t i = 0; kind && i + kind <= bytes; i += kind) {
        uint32_t c = 0;
        std::memcpy(&c, data + i, kind); // little-endian: the low bytes first
        if (c < 0x80) {
            out += char(c);
        } else if (c < 0x800) {
            out += char(0xc0 | (c >> 6));
            out += char(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out += char(0xe0 | (c >> 12));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        } else {
            out += char(0xf0 | (c >> 18));
            out += char(0x80 | ((c >> 12) & 0x3f));
            out += char(0x80 | ((c >> 6) & 0x3f));
            out += char(0x80 | (c & 0x3f));
        }
    }
    return out;
}

// "NAME\tFILE\tLINE" of a walked frame, as the session would name it.
std::string describe(const agent::PythonFrame &frame)
{
    static uint8_t buffer[1 << 16];
    const size_t n = agent::pythonCodeFacts(g_target, frame.code, buffer, sizeof buffer);
    if (n == 0)
        return "?\t?\t0";
    agent::PythonCodeFacts facts{};
    std::memcpy(&facts, buffer, sizeof facts);
    const uint8_t *name = buffer + sizeof facts;
    const uint8_t *file = name + facts.nameBytes;
    const uint8_t *table = file + facts.fileBytes;
    const int line = frame.instruction < 0 ? facts.firstLine
                                           : engine::lineForOffset(g_target.layout.lineTable, facts.firstLine, table,
                                                                   facts.lineTableBytes, frame.instruction);
    return utf8Of(name, facts.nameBytes, facts.nameKind) + "\t" + utf8Of(file, facts.fileBytes, facts.fileKind) + "\t" +
           std::to_string(line);
}

// HOOK: the script's probe, with its own truth.
extern "C" void hostProbe(const char *truth)
{
    agent::PythonFrame frames[agent::kMaxPythonFrames];
    uint32_t flags = 0;
    const int n = agent::pythonWalk(g_target, t_cache, frames, agent::kMaxPythonFrames, flags);
    const std::string text(truth);
    const size_t newline = text.find('\n');
    std::string out = "probe " + text.substr(0, newline) + "\n";
    for (size_t at = newline; at != std::string::npos && at + 1 < text.size();) {
        const size_t next = text.find('\n', at + 1);
        out += "truth " + text.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1) + "\n";
        at = next;
    }
    for (int i = 0; i < n; ++i)
        out += "walk " + describe(frames[i]) + "\t" + ((frames[i].flags & agent::PythonFrameEntry) ? "1" : "0") + "\n";
    out += "flags " + std::to_string(flags) + "\nend\n";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
}

uint64_t nowNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// BENCH: 1000 walks of the stack the script called from.
extern "C" void hostBench()
{
    agent::PythonFrame frames[agent::kMaxPythonFrames];
    std::vector<uint64_t> ns;
    int n = 0;
    uint32_t flags = 0;
    for (int i = 0; i < 1000; ++i) {
        const uint64_t start = nowNs();
        n = agent::pythonWalk(g_target, t_cache, frames, agent::kMaxPythonFrames, flags);
        ns.push_back(nowNs() - start);
    }
    std::sort(ns.begin(), ns.end());
    std::printf("timing %d %llu %llu %u\n", n, static_cast<unsigned long long>(ns[ns.size() / 2]),
                static_cast<unsigned long long>(ns[ns.size() * 99 / 100]), flags);
    std::fflush(stdout);
}

void *walkWithoutPython(void *)
{
    agent::PythonFrame frames[8];
    agent::PythonThreadCache cache{};
    uint32_t flags = 0;
    const int n = agent::pythonWalk(g_target, cache, frames, 8, flags);
    std::printf("nothread %d %u\n", n, flags);
    std::fflush(stdout);
    return nullptr;
}

template <typename F> F symbol(void *handle, const char *name)
{
    void *s = dlsym(handle, name);
    if (!s) {
        std::fprintf(stderr, "python_host: %s not found\n", name);
        std::exit(2);
    }
    return reinterpret_cast<F>(s);
}

int run(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: python_host LIBPYTHON SCRIPT\n");
        return 2;
    }
    void *python = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    link_map *map = nullptr;
    if (!python || dlinfo(python, RTLD_DI_LINKMAP, &map) != 0 || !map) {
        std::fprintf(stderr, "python_host: cannot open %s: %s\n", argv[1], dlerror());
        return 2;
    }
    const auto image = engine::inspectPythonImage(map->l_name, static_cast<int64_t>(map->l_addr));
    if (!image || !image->runtimeAddress) {
        std::fprintf(stderr, "python_host: %s: %s\n", map->l_name,
                     image ? "no _PyRuntime" : image.error().message.c_str());
        return 2;
    }
    symbol<void (*)()>(python, "Py_Initialize")();
    // 3.13 describes itself at the start of _PyRuntime, in this very process.
    engine::DebugOffsets313 offsets{};
    std::memcpy(&offsets, reinterpret_cast<const void *>(image->runtimeAddress), // NOLINT(performance-no-int-to-ptr)
                sizeof offsets);
    const auto layout = engine::choosePythonLayout(image->version.major, image->version.minor,
                                                   image->version.minor >= 13 ? &offsets : nullptr);
    if (!layout) {
        std::fprintf(stderr, "python_host: %s\n", layout.error().message.c_str());
        return 2;
    }
    g_target.layout = layout->layout;
    g_target.runtime = image->runtimeAddress;
    g_target.codeType = image->codeTypeAddress;
    std::printf("python %s %s; layout: %s\n", image->version.text.c_str(), map->l_name, layout->source.c_str());
    std::fflush(stdout);

    char script[4096];
    std::snprintf(script, sizeof script,
                  "path = %s\nexec(compile(open(path).read(), path, 'exec'), {'__name__': '__main__', '__file__': "
                  "path, 'HOOK': %llu, 'BENCH': %llu})\n",
                  ("'" + std::string(argv[2]) + "'").c_str(),
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&hostProbe)),
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&hostBench)));
    const int ran = symbol<int (*)(const char *)>(python, "PyRun_SimpleString")(script);

    pthread_t thread;
    pthread_create(&thread, nullptr, walkWithoutPython, nullptr);
    pthread_join(thread, nullptr);

    symbol<int (*)()>(python, "Py_FinalizeEx")();
    return ran == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "python_host: %s\n", e.what());
        return 2;
    }
}
