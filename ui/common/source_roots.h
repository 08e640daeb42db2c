#pragma once

#include <QStringList>

#include <string>
#include <vector>

namespace emberline::ui {

// The folders the user added to look for source files under (for binaries built elsewhere), kept in QSettings
// ("sourceRoots") and handed to the engine's SourceLocator.
//
// Thread: GUI thread.
class SourceRoots {
public:
    QStringList folders() const;
    void setFolders(const QStringList &folders);
    std::vector<std::string> forLocator() const;
};

} // namespace emberline::ui
