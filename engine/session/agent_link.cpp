#include "engine/session/agent_link.h"
#include "engine/unwind/unwind_table_server.h"

#include "engine/agent/agent_protocol.h"
#include "engine/common/clock.h"
#include "engine/common/install_paths.h"
#include "engine/inject/inject_client.h"
#include "engine/process/launcher.h"
#include "engine/sampler/perf_event_sets.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

namespace emberline::engine {
namespace {

// An ELF executable without a program interpreter: no dynamic loader runs in it, so nothing is preloaded.
bool staticallyLinked(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    bool isStatic = false;
    if (Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
        GElf_Ehdr ehdr;
        if (elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) &&
            (ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN)) {
            size_t count = 0;
            elf_getphdrnum(elf, &count);
            bool interpreter = false;
            bool dynamic = false;
            for (size_t i = 0; i < count; ++i) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, static_cast<int>(i), &ph)) {
                    interpreter |= ph.p_type == PT_INTERP;
                    dynamic |= ph.p_type == PT_DYNAMIC;
                }
            }
            // A shared library has neither an interpreter nor, always, a reason to be run; a static-pie has
            // PT_DYNAMIC but no interpreter.
            isStatic = !interpreter && (ehdr.e_type == ET_EXEC || dynamic);
        }
        elf_end(elf);
    }
    ::close(fd);
    return isStatic;
}

// Where the rings' folder may go, best first. A ring is a shared file the program writes all the time: on tmpfs
// ($XDG_RUNTIME_DIR, /dev/shm) its pages are plain memory, while in a file on disk the kernel writes them back
// (disk traffic for nothing, and a fault in the program at the first write after each writeback). A tmpfs is
// taken only with room for several rings; else $TMPDIR or /tmp.
std::vector<std::string> folderParents(const SessionConfig &config)
{
    if (!config.agentFolderParent.empty())
        return {config.agentFolderParent};
    constexpr uint64_t kRoom = uint64_t(64) << 20;
    std::vector<std::string> out;
    const char *runtime = std::getenv("XDG_RUNTIME_DIR");
    for (const std::string &candidate : {std::string(runtime && *runtime ? runtime : ""), std::string("/dev/shm")}) {
        struct statfs fs {};
        if (candidate.empty() || ::statfs(candidate.c_str(), &fs) != 0 || fs.f_type != TMPFS_MAGIC ||
            uint64_t(fs.f_bavail) * uint64_t(fs.f_bsize) < kRoom || ::access(candidate.c_str(), W_OK | X_OK) != 0)
            continue;
        out.push_back(candidate);
    }
    const char *tmp = std::getenv("TMPDIR");
    out.emplace_back(tmp && *tmp ? tmp : "/tmp");
    return out;
}

} // namespace

namespace {

// The attached program's user and group (the owner of /proc/PID), and whether its root is ours: a program in a
// container sees another file system, where the rings' folder must be made (through /proc/PID/root).
struct TargetPlace {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string root; // "" when it is ours, else /proc/PID/root
};

Result<TargetPlace> targetPlace(int pid)
{
    const std::string proc = "/proc/" + std::to_string(pid);
    struct stat st {};
    if (::stat(proc.c_str(), &st) != 0)
        return makeError(Error::Code::Invalid, "no process " + std::to_string(pid));
    TargetPlace place{st.st_uid, st.st_gid, {}};
    struct stat theirs {};
    struct stat ours {};
    if (::stat((proc + "/root/").c_str(), &theirs) != 0)
        return makeError(Error::Code::Permission, "cannot see process " + std::to_string(pid) + "'s files (/proc/" +
                                                      std::to_string(pid) + "/root): " + std::strerror(errno));
    if (::stat("/", &ours) == 0 && (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino))
        place.root = proc + "/root";
    return place;
}

// Whether the ELF file at `path` defines `malloc` and calls its own definition directly: no relocation of its own
// names malloc (a library that does calls it through its global offset table, which the agent rewrites; a program's
// executable calls its own functions directly).
bool callsOwnMallocDirectly(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    bool defines = false;
    bool relocated = false;
    if (Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
        size_t dynsym = 0;
        Elf_Scn *scn = nullptr;
        while ((scn = elf_nextscn(elf, scn)) != nullptr) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNSYM || shdr.sh_entsize == 0)
                continue;
            dynsym = elf_ndxscn(scn);
            Elf_Data *data = elf_getdata(scn, nullptr);
            const size_t count = shdr.sh_size / shdr.sh_entsize;
            for (size_t i = 0; data && i < count && !defines; ++i) {
                GElf_Sym sym;
                if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF ||
                    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
                    continue;
                const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
                defines = name && std::strcmp(name, "malloc") == 0;
            }
        }
        GElf_Ehdr ehdr;
        const bool executable = gelf_getehdr(elf, &ehdr) && ehdr.e_type == ET_EXEC;
        while (defines && !executable && !relocated && (scn = elf_nextscn(elf, scn)) != nullptr) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || shdr.sh_link != dynsym || shdr.sh_entsize == 0)
                continue;
            Elf_Data *data = elf_getdata(scn, nullptr);
            Elf_Scn *symbols = elf_getscn(elf, dynsym);
            GElf_Shdr symbolsHeader;
            Elf_Data *symbolData = symbols ? elf_getdata(symbols, nullptr) : nullptr;
            if (!data || !symbolData || !gelf_getshdr(symbols, &symbolsHeader))
                continue;
            for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && !relocated; ++i) {
                GElf_Rela rela;
                GElf_Sym sym;
                if (!gelf_getrela(data, static_cast<int>(i), &rela) ||
                    !gelf_getsym(symbolData, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym))
                    continue;
                const char *name = elf_strptr(elf, symbolsHeader.sh_link, sym.st_name);
                relocated = name && std::strcmp(name, "malloc") == 0;
            }
        }
        elf_end(elf);
    }
    ::close(fd);
    return defines && !relocated;
}

// The modules of process `pid` whose own allocator escapes the agent's tables (the C library and the agent aside).
std::vector<std::string> ownAllocatorModules(int pid)
{
    std::vector<std::string> out;
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    std::vector<std::string> seen;
    while (std::getline(maps, line)) {
        const size_t slash = line.find('/');
        if (slash == std::string::npos)
            continue;
        const std::string path = line.substr(slash);
        if (std::find(seen.begin(), seen.end(), path) != seen.end())
            continue;
        seen.push_back(path);
        const std::string name = std::filesystem::path(path).filename().string();
        if (name.rfind("libc.so", 0) == 0 || agent::isAgentFileName(name.data(), name.size()) ||
            name.rfind("ld-linux", 0) == 0)
            continue;
        if (callsOwnMallocDirectly("/proc/" + std::to_string(pid) + "/root" + path))
            out.push_back(path);
    }
    return out;
}

} // namespace

Result<std::unique_ptr<AgentLink>> AgentLink::create(const SessionConfig &config, const std::string &purpose)
{
    const std::string agentPath =
        config.agentPath.empty() ? installedLibraryFile(agent::kLibraryName) : config.agentPath;
    if (agentPath.empty() || ::access(agentPath.c_str(), R_OK) != 0)
        return makeError(Error::Code::Unsupported,
                         purpose + " needs Emberline's agent library, not found at " +
                             (agentPath.empty() ? std::string(agent::kLibraryName) : agentPath) +
                             " (is Emberline installed whole?)");
    // An attached program writes its rings where it can: in its own root, in a folder of its own user (a tmpfs with
    // room, or /tmp: a folder under another user's $XDG_RUNTIME_DIR is closed to it).
    std::optional<TargetPlace> place;
    std::vector<std::string> parents;
    if (config.pid > 0) {
        auto found = targetPlace(config.pid);
        if (!found)
            return found.error();
        place = found.value();
        if (!config.agentFolderParent.empty())
            parents = {config.agentFolderParent};
        else
            for (const char *candidate : {"/dev/shm", "/tmp"}) {
                struct statfs fs {};
                const std::string path = place->root + candidate;
                if (::statfs(path.c_str(), &fs) == 0 && ::access(path.c_str(), W_OK | X_OK) == 0)
                    parents.push_back(path);
            }
    } else {
        parents = folderParents(config);
    }
    std::string folder;
    std::string failure;
    for (const std::string &parent : parents) {
        std::string pattern = parent + "/emberline-agent-XXXXXX";
        // mkdtemp creates it 0700: only the session's user (and an attached program's) can place rings in it.
        if (::mkdtemp(pattern.data())) {
            folder = pattern;
            break;
        }
        if (failure.empty())
            failure = "cannot create a folder for Emberline's agent in " + parent + ": " + std::strerror(errno);
    }
    if (folder.empty())
        return makeError(Error::Code::Io, failure.empty() ? "no folder for Emberline's agent" : failure);
    std::string inTarget;
    if (place) {
        if (place->uid != ::geteuid() && ::chown(folder.c_str(), place->uid, place->gid) != 0) {
            const int error = errno;
            ::rmdir(folder.c_str());
            return makeError(Error::Code::Permission, "cannot give the agent's folder " + folder + " to process " +
                                                          std::to_string(config.pid) + "'s user " +
                                                          std::to_string(place->uid) + ": " + std::strerror(error));
        }
        inTarget = folder.substr(place->root.size());
    }
    auto link = std::unique_ptr<AgentLink>(new AgentLink(config, folder, agentPath));
    link->m_directoryInTarget = inTarget;
    return link;
}

AgentLink::AgentLink(const SessionConfig &config, std::string directory, std::string agentPath)
    : m_agentPath(std::move(agentPath)), m_rings(std::move(directory))
{
    m_rings.setUnwindMode(config.agentWalks ? agent::UnwindMode::Walk : agent::UnwindMode::Copy, config.walkCheckEvery);
    if (!config.command.empty()) {
        m_executable = findExecutable(config.command.front());
        m_static = !m_executable.empty() && staticallyLinked(m_executable);
    }
}

AgentLink::~AgentLink()
{
    (void)detach(); // an attached program's agent let go (a session that failed after the attach)
    // Rings are removed as they are found; anything left (a ring created after the last look) goes too.
    std::error_code ec;
    std::filesystem::remove_all(m_rings.directory(), ec);
}

void AgentLink::askMemory(uint64_t allocInterval, uint64_t ringBytes, bool pythonAllocators)
{
    m_allocInterval = std::max<uint64_t>(allocInterval, 1);
    m_pythonAllocators = pythonAllocators;
    m_ringBytes = std::max(m_ringBytes, ringBytes);
}

void AgentLink::askCpu(uint64_t cpuPeriodNs, uint64_t ringBytes, bool perfEvents)
{
    m_cpuPeriodNs = std::max<uint64_t>(cpuPeriodNs, 1);
    m_cpuPerfEvents = perfEvents;
    m_ringBytes = std::max(m_ringBytes, ringBytes);
    // The program's agent opens a perf event on each of its threads as it starts: the kernel's wait as it turns its
    // scheduler hooks on is taken here, before the launch or the attach (an attached thread stood stopped 11 to
    // 30 ms for it, 2 to 3 ms without it).
    if (perfEvents && m_perfHold.fd < 0)
        m_perfHold.fd = holdPerfScheduling();
}

std::vector<std::pair<std::string, std::string>>
AgentLink::environment(const std::vector<std::pair<std::string, std::string>> &given) const
{
    std::string preload = m_agentPath;
    std::string before;
    if (const char *own = std::getenv("LD_PRELOAD"))
        before = own;
    for (const auto &[name, value] : given)
        if (name == "LD_PRELOAD")
            before = value;
    if (!before.empty())
        preload += ":" + before;
    std::vector<std::pair<std::string, std::string>> env = {{"LD_PRELOAD", preload}};
    for (auto &option : options(m_rings.directory()))
        env.push_back(std::move(option));
    return env;
}

std::vector<std::pair<std::string, std::string>> AgentLink::options(const std::string &directory) const
{
    std::vector<std::pair<std::string, std::string>> out = {{agent::kEnvDirectory, directory}};
    if (m_allocInterval != 0)
        out.emplace_back(agent::kEnvAllocInterval, std::to_string(m_allocInterval));
    if (m_cpuPeriodNs != 0)
        out.emplace_back(agent::kEnvCpuPeriod, std::to_string(m_cpuPeriodNs));
    if (m_cpuPeriodNs != 0 && m_cpuPerfEvents)
        out.emplace_back(agent::kEnvCpuClock, "perf");
    if (m_allocInterval != 0 && m_pythonAllocators)
        out.emplace_back(agent::kEnvPythonAllocators, "1");
    if (m_ringBytes != 0)
        out.emplace_back(agent::kEnvRingBytes, std::to_string(m_ringBytes));
    return out;
}

std::string AgentLink::injectHelper() const
{
    // Installed beside the agent (lib/emberline), as it is in the build tree.
    const std::string beside = (std::filesystem::path(m_agentPath).parent_path() / kInjectHelperName).string();
    return ::access(beside.c_str(), X_OK) == 0 ? beside : std::string();
}

Result<AgentLink::Attached> AgentLink::attach(int pid)
{
    std::string text;
    for (const auto &[name, value] : options(m_directoryInTarget.empty() ? m_rings.directory() : m_directoryInTarget))
        text.append(name).append("=").append(value).append("\n");
    InjectRequest request;
    request.pid = pid;
    request.library = m_agentPath;
    request.function = "emberline_agent_attach";
    request.argument = text;
    const int64_t injectStart = clockNs(CLOCK_MONOTONIC);
    auto injected = injectWithHelper(request, injectHelper());
    if (!injected)
        return injected.error();
    const InjectReport &report = injected.value();
    const uint64_t injectNs = uint64_t(clockNs(CLOCK_MONOTONIC) - injectStart);
    const std::string program = "process " + std::to_string(pid);
    switch (report.result) {
    case -EEXIST:
        return makeError(Error::Code::Unsupported,
                         program + " runs Emberline's agent already, for the session that launched it");
    case -EBUSY:
        return makeError(Error::Code::Unsupported, program + " is profiled by another Emberline session already");
    case -EIO:
        return makeError(Error::Code::Io, "Emberline's agent in " + program + " could not create its ring in " +
                                              m_rings.directory() + " (is the file system full?)");
    case -ENOSYS:
        return makeError(Error::Code::Unsupported, "Emberline's agent found no allocator in " + program);
    case -EINVAL:
        return makeError(Error::Code::Invalid, "Emberline's agent in " + program + " refused the session's options");
    default:
        break;
    }
    if (report.result < 0)
        return makeError(Error::Code::Io, "Emberline's agent in " + program + " failed to start (" +
                                              std::strerror(int(-report.result)) + ")");
    m_attachedPid = pid;
    Attached out;
    out.modules = int(report.result);
    out.stoppedNs = report.stoppedNs;
    out.injectNs = injectNs;
    out.loadedBefore = report.loadedBefore;
    out.attachedRealNs = clockNs(CLOCK_REALTIME);
    out.ownAllocators = ownAllocatorModules(pid);
    return out;
}

Status AgentLink::detach()
{
    if (m_attachedPid <= 0)
        return Ok{};
    const int pid = std::exchange(m_attachedPid, 0);
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return Ok{}; // the program ended: nothing to put back
    InjectRequest request;
    request.pid = pid;
    request.library = m_agentPath;
    request.function = "emberline_agent_detach";
    request.loadIfMissing = false;
    auto done = injectWithHelper(request, injectHelper());
    if (!done)
        return makeError(done.error().code, "could not let Emberline's agent in process " + std::to_string(pid) +
                                                " go: " + done.error().message +
                                                " (it lets itself go once it finds the session gone)");
    return Ok{};
}

namespace {

const char *fallbackName(agent::WalkFallback reason)
{
    switch (reason) {
    case agent::WalkFallback::Expression:
        return "a DWARF expression rule";
    case agent::WalkFallback::Signal:
        return "a signal frame";
    case agent::WalkFallback::Plt:
        return "a PLT entry";
    case agent::WalkFallback::NoFde:
        return "code without unwind information";
    case agent::WalkFallback::Register:
        return "a rule on another register";
    case agent::WalkFallback::Other:
        return "a rule the tables cannot hold";
    case agent::WalkFallback::NoModule:
        return "code in no tabled module (JIT, vDSO, not tabled yet)";
    case agent::WalkFallback::OutOfBounds:
        return "a frame off the thread's stack (an alternate or switched stack)";
    case agent::WalkFallback::BadFrame:
        return "a frame that did not go up the stack";
    case agent::WalkFallback::NotReady:
        return "tables not there yet, or the modules changing";
    case agent::WalkFallback::Disabled:
        return "the copy asked for";
    }
    return "other";
}

// The count of a histogram in agent::handlerBucket's buckets, and the lower bounds of the buckets of its median and
// 99th percentile.
void bucketPercentiles(const std::array<uint64_t, agent::kHandlerBuckets> &buckets, uint64_t &count, uint64_t &p50,
                       uint64_t &p99)
{
    count = 0;
    for (uint64_t n : buckets)
        count += n;
    uint64_t seen = 0;
    for (int b = 0; b < agent::kHandlerBuckets && count > 0; ++b) {
        const uint64_t before = seen;
        seen += buckets[size_t(b)];
        if (before * 2 < count && seen * 2 >= count)
            p50 = agent::handlerBucketStart(b);
        if (before * 100 < count * 99 && seen * 100 >= count * 99)
            p99 = agent::handlerBucketStart(b);
    }
}

} // namespace

std::shared_ptr<const AgentStacksSummary> agentStacksSummary(const RingReader &rings, const UnwindCounters &unwind,
                                                             bool walking)
{
    auto s = std::make_shared<AgentStacksSummary>();
    const RingCounters c = rings.counters();
    s->walking = walking;
    s->walked = c.walked;
    s->stackRefs = c.stackRefs;
    s->leafWalks = c.leafWalks;
    for (int i = 0; i < agent::kWalkFallbackCount; ++i) {
        const uint64_t n = c.walkFallbacks[size_t(i)];
        s->copied += n;
        if (n > 0)
            s->copiedBecause.emplace_back(fallbackName(agent::WalkFallback(i)), n);
    }
    std::sort(s->copiedBecause.begin(), s->copiedBecause.end(),
              [](const auto &a, const auto &b) { return a.second > b.second; });
    s->checks = unwind.walkChecks;
    s->mismatches = unwind.walkMismatches;
    s->walkLonger = unwind.walkLonger;
    s->unknownRefs = c.unknownStackRefs;
    bucketPercentiles(c.cpuHandlerNs, s->handlerSamples, s->handlerP50Ns, s->handlerP99Ns);
    bucketPercentiles(c.pythonWalkNs, s->pythonWalks, s->pythonWalkP50Ns, s->pythonWalkP99Ns);
    if (s->pythonWalks > 0)
        s->pythonWalkFrames = double(c.pythonWalkFrames) / double(s->pythonWalks);
    s->pythonRepeatChecks = c.pythonRepeatChecks;
    s->pythonRepeatDiffers = c.pythonRepeatDiffers;
    if (const auto tables = rings.tableStats()) {
        s->tablesBuilt = tables->tablesBuilt;
        s->tablesFailed = tables->tablesFailed;
        s->tablesStored = tables->tablesStored;
        s->tableBytes = tables->arenaBytes;
        s->tableBuildNs = int64_t(tables->buildNs);
        s->tableProblem = tables->firstError;
    }
    return s;
}

void pythonRepeatHealth(const RingReader &rings, std::vector<std::string> &notes, std::vector<std::string> &faults)
{
    const RingCounters c = rings.counters();
    if (c.pythonRepeatChecks == 0)
        return;
    char share[32];
    std::snprintf(share, sizeof share, "%.3f%%", 100.0 * double(c.pythonRepeatDiffers) / double(c.pythonRepeatChecks));
    const std::string line = std::to_string(c.pythonRepeatChecks) +
                             " Python chains given again from a thread's last walk, checked against a walk anew: " +
                             std::to_string(c.pythonRepeatDiffers) + " differ (" + share + ")";
    notes.push_back("python: " + line);
    if (c.pythonRepeatDiffers * 1000 > c.pythonRepeatChecks)
        faults.push_back("python: " + line + ": the Python frames of some samples may be wrong; report the program");
}

} // namespace emberline::engine
