#pragma once

#include "engine/common/result.h"
#include "engine/flush/flush.h"
#include "engine/upload/tags.h"
#include "engine/upload/upload_settings.h"

#include <string>
#include <vector>

namespace emberline::engine {

// One attachment of the multipart body, compressed as it goes on the wire.
struct UploadAttachment {
    std::string name;  // part name and filename: profile.pprof, code-provenance.json
    std::string bytes; // compressed
    uint64_t rawBytes = 0;
    std::string encoding; // "zstd" or "gzip"
};

// What Datadog receives for one flush: event.json (version "4", family native) and the attachments, listed
// in event.json in the order libdatadog uses (additional files first, profile.pprof last).
struct UploadPayload {
    std::string eventJson;
    std::vector<UploadAttachment> attachments;
    std::vector<Tag> tags;
    uint64_t bodyBytes() const;
};

struct PayloadContext {
    UploadCodec codec = UploadCodec::Zstd;
    std::string service;
    std::string env;
    std::string version;
    std::string mainExecutable; // for code provenance; empty: guessed from the mappings
};

// Builds the payload of one flush. The pprof bytes (gzip from the exporter) are sent as zstd level 1, as
// libdatadog does, or kept as they are with the gzip codec. Code provenance comes from the flush when the
// exporter filled it, otherwise from the profile's mappings.
//
// Thread: the uploader thread.
Result<UploadPayload> buildUploadPayload(const Flush &flush, const std::vector<Tag> &tags,
                                         const PayloadContext &context);

// UTC RFC 3339 with nanoseconds and Z, as libdatadog writes start and end.
std::string rfc3339Utc(int64_t nsSinceEpoch);

} // namespace emberline::engine
