#include "engine/import/open_profile.h"

#include "engine/import/folded_reader.h"
#include "engine/import/perf_data_reader.h"
#include "engine/import/perf_script_reader.h"
#include "engine/import/text_format.h"

namespace emberline::engine {

Result<Profile> readProfileFile(const std::string &path, const PprofReadOptions &options)
{
    auto format = sniffFileFormat(path);
    if (!format)
        return readPprofFile(path, options); // the pprof reader words a missing or unreadable file
    switch (format.value()) {
    case ProfileFormat::PerfData:
        return readPerfDataFile(path, options);
    case ProfileFormat::PerfScript:
        return readPerfScriptFile(path, options);
    case ProfileFormat::Folded:
        return readFoldedFile(path, options);
    case ProfileFormat::Pprof:
        break;
    }
    return readPprofFile(path, options);
}

} // namespace emberline::engine
