#pragma once

#include "engine/common/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// One Datadog tag, `key:value` (or a bare `key` when value is empty and bare is set).
struct Tag {
    std::string key;
    std::string value;
    std::string text() const { return value.empty() ? key : key + ":" + value; }
    bool operator==(const Tag &) const = default;
};

// The outcome of parsing a tag list: the tags that are valid, and one message per refused piece that names the
// piece and says why it was refused.
struct TagParseResult {
    std::vector<Tag> tags;
    std::vector<std::string> errors;
    bool ok() const { return errors.empty(); }
};

// Checks one tag against the rules Datadog's clients share: a key that starts with a letter, at most 200
// bytes in all, no comma (tags are joined with commas), no whitespace or control character, no trailing ':'.
Status validateTag(const Tag &tag);

// Parses DD_TAGS (or the user's own tag field) by the rules of Datadog's tracers: split on commas when there
// is one, otherwise on whitespace; trim; split key from value at the first ':' or '='; OpenTelemetry keys
// deployment.environment, service.version and service.name map to env, version and service.
TagParseResult parseTagList(std::string_view text);

// Keys that TagBuilder sets itself; a user tag with one of these keys is refused.
bool isGeneratedTagKey(std::string_view key);

// "x86_64-unknown-linux-gnu" on an x86-64 Linux: the value of runtime_platform, as libdatadog writes it.
std::string runtimePlatform();
std::string hostName();

// Builds the tags of each flush: service, env (only when set, so the agent's default_env applies), version,
// host, language:native, runtime-id (one UUID per target process), process_id, profiler_version, profile_seq
// (0, 1, 2... per target process), runtime_os, runtime_arch, the user's tags, runtime_platform last.
//
// Thread: whichever thread submits flushes (the uploader calls it under its queue lock).
class TagBuilder {
public:
    struct Identity {
        std::string service; // empty: defaultService of each call
        std::string env;
        std::string version;
        std::string host; // empty: this machine's host name
        std::vector<Tag> userTags;
    };
    explicit TagBuilder(Identity identity);

    // The tags of the next flush of process `pid` (0 when unknown: no process_id tag, one shared sequence).
    std::vector<Tag> nextFlushTags(int pid, const std::string &defaultService);
    std::string runtimeId(int pid);

private:
    struct ProcessState {
        std::string runtimeId;
        uint64_t nextSeq = 0;
    };
    Identity m_identity;
    std::string m_platform;
    std::map<int, ProcessState> m_processes;
};

std::string joinTags(const std::vector<Tag> &tags);

} // namespace emberline::engine
