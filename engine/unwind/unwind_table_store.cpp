#include "engine/unwind/unwind_table_store.h"

#include "engine/common/kept_files.h"

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
constexpr uint64_t kMaxStoredBytes = uint64_t(256) << 20; // a table larger than this is not a module's

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

} // namespace

std::string unwindTableStoreDirectory()
{
    return keptFilesDirectory("unwind-tables", "EMBERLINE_UNWIND_CACHE");
}

std::shared_ptr<const ModuleUnwindTable> loadStoredUnwindTable(const std::string &directory, const std::string &buildId,
                                                               const std::string &path)
{
    const std::string file = fileFor(directory, buildId);
    std::string bytes;
    if (directory.empty() || buildId.empty() || file.empty() || !readKeptFile(file, kMaxStoredBytes, bytes) ||
        bytes.empty())
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
    const StoreHeader header;
    std::string bytes(sizeof header + sizeof(UnwindTableStats), '\0');
    std::memcpy(bytes.data(), &header, sizeof header);
    std::memcpy(bytes.data() + sizeof header, &table.stats, sizeof(UnwindTableStats));
    const std::vector<uint8_t> shared = table.sharedBytes();
    bytes.append(reinterpret_cast<const char *>(shared.data()), shared.size());
    return bytes.size() < kMaxStoredBytes && writeKeptFile(file, bytes, 0644);
}

} // namespace emberline::engine
