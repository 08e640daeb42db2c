#include "engine/unwind/unwind_table_store.h"

#include "engine/common/install_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <vector>

namespace emberline::engine {
namespace {

constexpr uint32_t kStoreMagic = 0x53554d45; // "EMUS"
constexpr uint32_t kStoreVersion = 1;

// The file: this header, the table's stats as the builder counted them, then the table as the agent reads it
// (agent::UnwindTableHeader and its rows).
struct StoreHeader {
    uint32_t magic = kStoreMagic;
    uint32_t version = kStoreVersion;
    uint32_t statsBytes = sizeof(UnwindTableStats);
    uint32_t tableVersion = agent::kUnwindTableVersion;
};
static_assert(std::is_trivially_copyable_v<UnwindTableStats>);

std::string fileFor(const std::string &directory, const std::string &buildId)
{
    for (char c : buildId)
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            return {};
    return directory + '/' + buildId + ".v" + std::to_string(agent::kUnwindTableVersion) + ".rows";
}

bool readWhole(const std::string &file, std::vector<uint8_t> &out)
{
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (off_t(256) << 20);
    if (ok) {
        out.resize(size_t(st.st_size));
        size_t done = 0;
        while (ok && done < out.size()) {
            const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
            ok = n > 0;
            done += ok ? size_t(n) : 0;
        }
    }
    ::close(fd);
    return ok;
}

} // namespace

std::string unwindTableStoreDirectory()
{
    return keptFilesDirectory("unwind-tables", "EMBERLINE_UNWIND_CACHE");
}

std::shared_ptr<const ModuleUnwindTable> loadStoredUnwindTable(const std::string &directory, const std::string &buildId,
                                                               const std::string &path)
{
    const std::string file = fileFor(directory, buildId);
    std::vector<uint8_t> bytes;
    if (directory.empty() || buildId.empty() || file.empty() || !readWhole(file, bytes))
        return nullptr;
    StoreHeader header;
    const size_t tableAt = sizeof header + sizeof(UnwindTableStats);
    if (bytes.size() < tableAt)
        return nullptr;
    std::memcpy(&header, bytes.data(), sizeof header);
    const StoreHeader expected;
    if (header.magic != expected.magic || header.version != expected.version ||
        header.statsBytes != expected.statsBytes || header.tableVersion != expected.tableVersion)
        return nullptr;
    agent::UnwindTable view;
    if (!agent::unwindTableFromBytes(bytes.data() + tableAt, bytes.size() - tableAt, view) || view.count == 0 ||
        sizeof(agent::UnwindTableHeader) + size_t(view.count) * sizeof(agent::UnwindRow) != bytes.size() - tableAt)
        return nullptr;
    auto table = std::make_shared<ModuleUnwindTable>();
    table->path = path;
    table->buildId = buildId;
    table->stored = true;
    std::memcpy(&table->stats, bytes.data() + sizeof header, sizeof(UnwindTableStats));
    table->rows.assign(view.rows, view.rows + view.count);
    // Sorted and closed, as the walk's binary search needs them.
    for (size_t i = 1; i < table->rows.size(); ++i)
        if (table->rows[i].start <= table->rows[i - 1].start)
            return nullptr;
    if (table->rows.back().kind != agent::UnwindKind::NoFde)
        return nullptr;
    return table;
}

bool storeUnwindTable(const std::string &directory, const ModuleUnwindTable &table)
{
    const std::string file = fileFor(directory, table.buildId);
    if (directory.empty() || table.buildId.empty() || file.empty() || table.rows.empty())
        return false;
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    const std::string temp = file + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    const StoreHeader header;
    std::vector<uint8_t> bytes(sizeof header + sizeof(UnwindTableStats));
    std::memcpy(bytes.data(), &header, sizeof header);
    std::memcpy(bytes.data() + sizeof header, &table.stats, sizeof(UnwindTableStats));
    const std::vector<uint8_t> shared = table.sharedBytes();
    bytes.insert(bytes.end(), shared.begin(), shared.end());
    size_t done = 0;
    bool ok = true;
    while (ok && done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        ok = n > 0;
        done += ok ? size_t(n) : 0;
    }
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
        ::unlink(temp.c_str());
        return false;
    }
    return true;
}

} // namespace emberline::engine
