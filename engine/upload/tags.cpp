#include "engine/upload/tags.h"

#include <QSysInfo>
#include <QUuid>

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>

namespace emberline::engine {
namespace {

constexpr size_t kMaxTagBytes = 200;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::string mapOtelKey(const std::string &key)
{
    if (key == "deployment.environment")
        return "env";
    if (key == "service.version")
        return "version";
    if (key == "service.name")
        return "service";
    return key;
}

Error tagError(const Tag &tag, const std::string &why)
{
    return makeError(Error::Code::Invalid, "tag '" + tag.text() + "' " + why);
}

} // namespace

Status validateTag(const Tag &tag)
{
    const std::string text = tag.text();
    if (tag.key.empty())
        return tagError(tag, "has no key");
    if (!std::isalpha(static_cast<unsigned char>(tag.key.front())))
        return tagError(tag, "must start with a letter");
    if (text.size() > kMaxTagBytes)
        return tagError(tag, "is longer than 200 bytes");
    if (text.back() == ':')
        return tagError(tag, "ends with ':' (a tag needs a value after the colon)");
    for (const char c : text) {
        if (c == ',')
            return tagError(tag, "contains a comma (tags are separated by commas)");
        if (std::isspace(static_cast<unsigned char>(c)))
            return tagError(tag, "contains whitespace");
        if (std::iscntrl(static_cast<unsigned char>(c)))
            return tagError(tag, "contains a control character");
    }
    return Ok{};
}

TagParseResult parseTagList(std::string_view text)
{
    TagParseResult result;
    const bool byComma = text.find(',') != std::string_view::npos;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = byComma ? text.find(',', pos) : text.find_first_of(" \t\n\r", pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view piece = trim(text.substr(pos, end - pos));
        pos = end + 1;
        if (piece.empty())
            continue;
        const size_t split = piece.find_first_of(":=");
        Tag tag;
        if (split == std::string_view::npos) {
            tag.key = std::string(piece);
        } else {
            tag.key = mapOtelKey(std::string(trim(piece.substr(0, split))));
            tag.value = std::string(trim(piece.substr(split + 1)));
            if (tag.value.empty()) {
                result.errors.push_back("tag '" + std::string(piece) +
                                        "' ends with ':' (a tag needs a value after the colon)");
                continue;
            }
        }
        if (isGeneratedTagKey(tag.key)) {
            result.errors.push_back("tag '" + tag.text() + "' uses the key '" + tag.key +
                                    "', which Emberline sets itself");
            continue;
        }
        if (auto st = validateTag(tag); !st) {
            result.errors.push_back(st.error().message);
            continue;
        }
        result.tags.push_back(std::move(tag));
    }
    return result;
}

bool isGeneratedTagKey(std::string_view key)
{
    static constexpr std::string_view keys[] = {"language",         "runtime-id",       "process_id", "profile_seq",
                                                "profiler_version", "runtime_platform", "runtime_os", "runtime_arch"};
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

std::string runtimePlatform()
{
    utsname u{};
    std::string machine = uname(&u) == 0 ? u.machine : QSysInfo::currentCpuArchitecture().toStdString();
    return machine + "-unknown-linux-gnu";
}

std::string hostName()
{
    return QSysInfo::machineHostName().toStdString();
}

TagBuilder::TagBuilder(Identity identity) : m_identity(std::move(identity)), m_platform(runtimePlatform())
{
    if (m_identity.host.empty())
        m_identity.host = hostName();
}

std::string TagBuilder::runtimeId(int pid)
{
    ProcessState &state = m_processes[pid];
    if (state.runtimeId.empty())
        state.runtimeId = QUuid::createUuid().toString(QUuid::WithoutBraces).toStdString();
    return state.runtimeId;
}

std::vector<Tag> TagBuilder::nextFlushTags(int pid, const std::string &defaultService)
{
    const std::string id = runtimeId(pid);
    const uint64_t seq = m_processes[pid].nextSeq++;
    utsname u{};
    const std::string arch = uname(&u) == 0 ? u.machine : "unknown";

    std::vector<Tag> tags;
    const std::string &service = m_identity.service.empty() ? defaultService : m_identity.service;
    tags.push_back({"service", service.empty() ? std::string("unnamed-native-service") : service});
    if (!m_identity.env.empty())
        tags.push_back({"env", m_identity.env});
    if (!m_identity.version.empty())
        tags.push_back({"version", m_identity.version});
    tags.push_back({"host", m_identity.host});
    tags.push_back({"language", "native"});
    tags.push_back({"runtime-id", id});
    if (pid > 0)
        tags.push_back({"process_id", std::to_string(pid)});
    tags.push_back({"profiler_version", EMBERLINE_VERSION});
    tags.push_back({"profile_seq", std::to_string(seq)});
    tags.push_back({"runtime_os", "linux"});
    tags.push_back({"runtime_arch", arch});
    for (const Tag &t : m_identity.userTags) {
        if (t.key == "service" || t.key == "env" || t.key == "version" || t.key == "host")
            continue; // carried by the identity, which already resolved their precedence
        tags.push_back(t);
    }
    tags.push_back({"runtime_platform", m_platform});
    return tags;
}

std::string joinTags(const std::vector<Tag> &tags)
{
    std::string out;
    for (const Tag &t : tags) {
        if (!out.empty())
            out += ',';
        out += t.text();
    }
    return out;
}

} // namespace emberline::engine
