#pragma once

#include <string>

namespace emberline::engine {

// A file Emberline installs beside its library folder: <prefix>/lib/emberline/<name> for the running
// <prefix>/bin/emberline (the agent library, the injector), as installed and as built. Empty when the running
// executable cannot be found.
std::string installedLibraryFile(const std::string &name);

// A folder of what Emberline keeps between sessions: $XDG_CACHE_HOME/emberline/<name>, else
// ~/.cache/emberline/<name>. Empty when there is no absolute home or cache folder to use, or when the environment
// variable `offVariable` says "off".
std::string keptFilesDirectory(const char *name, const char *offVariable);

} // namespace emberline::engine
