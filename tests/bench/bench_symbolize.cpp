// Micro-benchmark of the symbolizer: the cost per address of a flush that meets new addresses (cold: the
// module's first addresses, including opening it and its debug file; new addresses in an open module) and of
// one that meets known addresses (warm: answered from the cache).
//   bench_symbolize [ADDRESSES_PER_MODULE] [ELF_FILE...]
// Without files it uses libstdc++ and libc as loaded by this process, and this executable (-g).
#include "engine/symbols/symbolizer.h"
#include "tests/engine/symbols/elf_test_image.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <link.h>
#include <string>
#include <unistd.h>
#include <vector>

using emberline::engine::Symbolizer;
using Clock = std::chrono::steady_clock;

namespace {

std::string loadedLibrary(const char *nameFragment)
{
    struct Search {
        const char *fragment;
        std::string path;
    } search{nameFragment, {}};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
            auto *s = static_cast<Search *>(data);
            if (info->dlpi_name != nullptr && std::string(info->dlpi_name).find(s->fragment) != std::string::npos) {
                s->path = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &search);
    return search.path;
}

std::string selfPath()
{
    char buffer[4096];
    const ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
    return length > 0 ? std::string(buffer, size_t(length)) : std::string();
}

// Mid-function file offsets (inside inlined code more often than entry points), spread over the file.
std::vector<uint64_t> sampleOffsets(const ElfTestImage &image, size_t count)
{
    std::vector<uint64_t> offsets;
    for (const ElfTestImage::Symbol &symbol : image.functions()) {
        if (auto offset = image.fileOffset(symbol.address + symbol.size / 2))
            offsets.push_back(*offset);
    }
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    if (offsets.size() > count) {
        std::vector<uint64_t> spread;
        for (size_t i = 0; i < count; ++i)
            spread.push_back(offsets[i * offsets.size() / count]);
        offsets.swap(spread);
    }
    return offsets;
}

struct Pass {
    double microseconds = 0;
    size_t named = 0;
    size_t withLine = 0;
};

Pass run(Symbolizer &symbolizer, const std::string &path, const std::string &buildId,
         const std::vector<uint64_t> &offsets, size_t begin, size_t end)
{
    Pass pass;
    const auto start = Clock::now();
    for (size_t i = begin; i < end; ++i) {
        const auto frames = symbolizer.symbolize(path, buildId, offsets[i]);
        pass.named += frames.empty() ? 0 : 1;
        pass.withLine += !frames.empty() && frames.front().line > 0 ? 1 : 0;
    }
    pass.microseconds = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    return pass;
}

void benchmark(const std::string &path, size_t count)
{
    const auto image = ElfTestImage::fromFile(path);
    if (!image) {
        std::printf("%-48s unreadable\n", path.c_str());
        return;
    }
    const std::vector<uint64_t> offsets = sampleOffsets(*image, count);
    if (offsets.size() < 2) {
        std::printf("%-48s no function symbols\n", path.c_str());
        return;
    }
    const std::string buildId = Symbolizer::readBuildId(path);
    const size_t half = offsets.size() / 2;

    Symbolizer symbolizer;
    const Pass first = run(symbolizer, path, buildId, offsets, 0, 1);   // opens the module
    const Pass cold = run(symbolizer, path, buildId, offsets, 1, half); // first flush, module open
    const Pass newAddresses = run(symbolizer, path, buildId, offsets, half, offsets.size());
    const Pass warm = run(symbolizer, path, buildId, offsets, 0, offsets.size()); // all cached

    const auto perAddress = [](const Pass &pass, size_t n) { return n != 0 ? pass.microseconds / double(n) : 0.0; };
    std::printf("%s\n  %zu addresses, %zu named, %zu with file:line\n", path.c_str(), offsets.size(),
                first.named + cold.named + newAddresses.named, first.withLine + cold.withLine + newAddresses.withLine);
    std::printf("  open module + first address   %10.0f us\n", first.microseconds);
    std::printf("  cold, first half              %10.2f us/address\n", perAddress(cold, half - 1));
    std::printf("  cold, second half (new addrs) %10.2f us/address\n", perAddress(newAddresses, offsets.size() - half));
    std::printf("  warm (cache hits)             %10.3f us/address\n", perAddress(warm, offsets.size()));
}

} // namespace

int main(int argc, char **argv)
{
    const size_t count = argc > 1 ? size_t(std::max(2, std::atoi(argv[1]))) : 2000;
    std::vector<std::string> paths;
    for (int i = 2; i < argc; ++i)
        paths.emplace_back(argv[i]);
    if (paths.empty())
        paths = {loadedLibrary("libstdc++"), loadedLibrary("libc.so"), selfPath()};
    for (const std::string &path : paths) {
        if (!path.empty())
            benchmark(path, count);
    }
    return 0;
}
