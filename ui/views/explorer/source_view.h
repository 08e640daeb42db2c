#pragma once

#include "engine/annotate/source_listing.h"

#include <QWidget>

#include <memory>
#include <string>

class QLabel;
class QTreeView;

namespace emberline::ui {

class SourceLinesModel;

// The source of the selected function: a title (function, file, self and total), a note when the file was not
// found or changed since the recording, and the lines with their self, total and share of the function, hot
// lines tinted, scrolled to the hottest. Until a function is chosen, or when it has no line numbers, a message
// takes the table's place.
//
// Thread: GUI thread; listings are built by a SourceRunner on a worker.
class SourceView : public QWidget {
    Q_OBJECT
public:
    explicit SourceView(QWidget *parent = nullptr);

    void setListing(std::shared_ptr<const engine::SourceListing> listing, const std::string &unit);
    // Replaces the listing with a message ("Loading…", "no line numbers", an error).
    void setMessage(const QString &message);
    SourceLinesModel *model() const { return m_model; }
    QTreeView *table() const { return m_table; }
    QString title() const;
    QString note() const;
    QString message() const;
    // Centres the hottest line of the listing (the one it opened on) in the view.
    void scrollToHottest();

private:
    void setupUi();
    void showNote(const QString &text);

    QLabel *m_title = nullptr;
    QLabel *m_note = nullptr;
    QLabel *m_message = nullptr;
    QTreeView *m_table = nullptr;
    SourceLinesModel *m_model = nullptr;
    int m_hottestRow = -1;
};

} // namespace emberline::ui
