#pragma once

#include <string>

namespace emberline::engine {

// A file Emberline installs beside its library folder: <prefix>/lib/emberline/<name> for the running
// <prefix>/bin/emberline (the agent library, the injector), as installed and as built. Empty when the running
// executable cannot be found.
std::string installedLibraryFile(const std::string &name);

// A program Emberline installs beside the running executable (<prefix>/bin/<name>, as installed and as built): the
// window's program beside `emberline`. Empty when the running executable cannot be found.
std::string installedProgramFile(const std::string &name);

} // namespace emberline::engine
