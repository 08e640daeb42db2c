#pragma once

#include <QString>
#include <QStringList>

namespace emberline::ui {

// The recently opened profiles, newest first, kept in QSettings ("recentFiles"). Entries whose file no longer
// exists are dropped whenever the list is read.
//
// Thread: GUI thread.
class RecentFiles {
public:
    static constexpr int kMaxEntries = 10;

    QStringList files() const;
    void add(const QString &path);
    void clear();
};

} // namespace emberline::ui
