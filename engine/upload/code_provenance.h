#pragma once

#include "engine/model/profile.h"

#include <string>
#include <vector>

namespace emberline::engine {

// One entry of code-provenance.json ("v1").
struct CodeProvenanceEntry {
    std::string kind; // "" (the user's own code), "standard library" or "library"
    std::string name;
    std::string version;
    std::vector<std::string> paths;
};

struct CodeProvenanceOptions {
    std::string mainExecutable; // the target's executable path; empty: guessed from the mappings
    std::string mainName;       // empty: the executable's file name
    std::string mainVersion;    // DD_VERSION, when set
};

// Datadog's code provenance for native code (the spec's proposal, since no official native client sends it):
// from the file-backed mappings of the flush's profile, the main executable is the user's code (kind ""),
// the C and C++ runtime (libc, libm, libstdc++, libgcc_s, ld-linux, the vdso...) is "standard library", Qt's
// libraries are one "library" named qt, and every other shared object is a "library" named by its soname.
// Versions come from the soname suffix of the file's real name (libstdc++.so.6 -> libstdc++.so.6.0.30).
// Paths are the full file names as the mappings carry them, so they prefix-match Mapping.filename.
//
// Thread: any (the uploader thread).
std::vector<CodeProvenanceEntry> codeProvenanceEntries(const Profile &profile, const CodeProvenanceOptions &options);
std::string codeProvenanceJson(const std::vector<CodeProvenanceEntry> &entries);
// The main executable among the profile's mappings: a file-backed mapping that is not a shared object.
std::string guessMainExecutable(const Profile &profile);

} // namespace emberline::engine
