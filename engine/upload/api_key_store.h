#pragma once

#include "engine/common/result.h"

#include <string>

namespace emberline::engine {

// The Datadog API key at rest: one file that only its owner may read (mode 0600), never QSettings, never a
// command line. `emberline record` reads the same file the settings widget writes.
//
// Thread: any.
std::string defaultApiKeyPath(); // $XDG_CONFIG_HOME/emberline/datadog-api-key
// Refuses a file that is not a regular file owned by the user, or that group or others may access.
Result<std::string> readApiKeyFile(const std::string &path);
// Writes atomically (temporary file, 0600 from creation, rename); creates the folder with 0700.
Status writeApiKeyFile(const std::string &path, const std::string &key);
Status removeApiKeyFile(const std::string &path);

} // namespace emberline::engine
