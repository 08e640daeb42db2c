#pragma once

#include "engine/compare/comparison.h"

#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QTimer;
class QToolButton;

namespace emberline::ui {

class BreadcrumbBar;
class ComparisonRunner;
class DiffFlameGraphView;
class DiffTablesView;
class LabelStrip;
class ThreadFilterButton;

// Everything shown for a comparison of two loaded profiles: the sample types both share, the thread filter (when
// both carry thread labels), normalization, the flame-graph search, the differential flame graph with its
// breadcrumb, the tables with base, new, change and change %, a message line for what the user must know about
// the inputs (no shared sample type, an empty side, the same file twice, a base far larger) and a status line.
// It keeps the user's choices and asks its ComparisonRunner for the comparison; it derives nothing itself.
//
// Fed by a live session instead (the constructor without profiles), it shows the comparisons the session's live
// stage publishes after every flush, keeping zoom, selection and search; its sample type and normalization go
// back to the session as requests (sampleTypeChosen, normalizeToggled), and the session's timeline chooses the
// threads.
//
// Thread: GUI thread.
class CompareExplorer : public QWidget {
    Q_OBJECT
public:
    CompareExplorer(std::shared_ptr<const engine::LoadedProfile> next,
                    std::shared_ptr<const engine::LoadedProfile> base, QWidget *parent = nullptr);
    explicit CompareExplorer(QWidget *parent = nullptr);

    // Fed mode: the sample types of the session (by index) and the one shown.
    void setSampleTypes(const engine::Profile &profile, int current);
    // Fed mode: the next comparison and what its sides are called, or why there is none.
    void showComparison(std::shared_ptr<const engine::Comparison> comparison, const QString &baseLabel,
                        const QString &newLabel);
    void showUnavailable(const QString &message);
    // Compares two time ranges of the profiles, [startNs, endNs) each (an opened profile's range B against its
    // range A, as a Shift+drag on its heatmap asks), called by the labels in the status line. Zoom, selection and
    // search stay.
    void compareRanges(engine::TimeRange base, engine::TimeRange next, const QString &baseLabel,
                       const QString &newLabel);
    std::optional<engine::TimeRange> baseRange() const { return m_baseRange; }
    std::optional<engine::TimeRange> newRange() const { return m_newRange; }

    std::shared_ptr<const engine::Comparison> comparison() const { return m_comparison; }
    const engine::LoadedProfile &newProfile() const { return *m_next; }
    const engine::LoadedProfile &baseProfile() const { return *m_base; }
    bool isComparing() const;
    DiffFlameGraphView *diffFlameGraph() const { return m_flame; }
    DiffTablesView *tables() const { return m_tables; }
    // What the message line says (notices and errors), empty when there is nothing to say.
    QString message() const;
    void focusSearch();
    void resetZoom();
    void selectFrame(uint32_t frame);
    uint32_t selectedFrame() const { return m_selectedFrame; }

Q_SIGNALS:
    void comparisonApplied();
    void comparisonFailed(const QString &message);
    // Fed mode: the user chose another sample type (an index into the session's sample types) or normalization.
    void sampleTypeChosen(int sampleType);
    void normalizeToggled(bool normalize);
    void widthsChosen(engine::DiffTree::Widths widths);

private:
    void setupUi();
    void createActions();
    void connectSignals();
    QWidget *createToolbar();
    void fillSampleTypes();
    void requestComparison();
    void applyComparison(std::shared_ptr<const engine::Comparison> comparison);
    void showError(const QString &message);
    void showMessage(const QStringList &lines, bool error);
    void updateBreadcrumb();
    void updateSearchLabel(int64_t matchedTotal, double share, size_t matchedFrames);
    void updateStatusLine();

    std::shared_ptr<const engine::LoadedProfile> m_next;
    std::shared_ptr<const engine::LoadedProfile> m_base;
    std::shared_ptr<const engine::Comparison> m_comparison;
    bool m_fed = false;
    bool m_requested = false; // a comparison was asked for (the first one waits for the event loop)
    std::optional<engine::TimeRange> m_baseRange;
    std::optional<engine::TimeRange> m_newRange;
    QString m_baseLabel;
    QString m_newLabel;
    uint32_t m_selectedFrame = UINT32_MAX;

    ComparisonRunner *m_runner = nullptr;
    QComboBox *m_sampleType = nullptr;
    ThreadFilterButton *m_threads = nullptr;
    QCheckBox *m_normalize = nullptr;
    QLineEdit *m_search = nullptr;
    QTimer *m_searchDelay = nullptr;
    QLabel *m_searchResult = nullptr;
    QToolButton *m_resetZoom = nullptr;
    QLabel *m_message = nullptr;
    BreadcrumbBar *m_breadcrumb = nullptr;
    DiffFlameGraphView *m_flame = nullptr;
    DiffTablesView *m_tables = nullptr;
    LabelStrip *m_status = nullptr;
};

} // namespace emberline::ui
