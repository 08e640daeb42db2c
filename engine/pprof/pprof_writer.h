#pragma once

#include "engine/common/result.h"
#include "engine/model/profile.h"

#include <string>

namespace emberline::engine {

// Serializes a Profile as profile.proto; gzip-compressed unless `compress` is false. The output reads in
// `go tool pprof` without warnings: string 0 is "", ids start at 1, every reference resolves.
//
// Thread: any.
std::string writePprof(const Profile &profile, bool compress = true);
Status writePprofFile(const Profile &profile, const std::string &path);

} // namespace emberline::engine
