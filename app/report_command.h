#pragma once

#include "engine/analysis/transforms.h"
#include "engine/report/report.h"

#include <QString>

#include <string>
#include <vector>

namespace emberline::app {

// What `emberline report` was asked, once its command line is parsed and checked.
struct ReportRequest {
    std::string file;
    std::string base;                        // empty: no comparison
    QString format = QStringLiteral("text"); // text, json or folded
    engine::ReportOptions options;
    std::vector<engine::Transform> transforms;
    bool list = false;
    std::string listPattern;
    std::vector<std::string> sourceRoots;
    bool disasm = false;
    std::string disasmPattern;
    std::vector<std::string> debugDirectories; // empty: /usr/lib/debug
};

// Loads the profile (and base), applies the transforms and prints the report; returns the exit code: 0, or 1
// with a message on stderr.
int runReportRequest(const ReportRequest &request);

} // namespace emberline::app
