#pragma once

#include "engine/model/frame_table.h"
#include "engine/model/profile.h"
#include "ui/jobs/disassembly_runner.h"

#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QAction;
class QLabel;
class QTableView;

namespace emberline::ui {

class DisassemblyModel;

// A function's machine code with each instruction's self and total, hot instructions coloured, and its source lines
// as separator rows; scrolled to the hottest instruction. The work (finding the binary by build id, possibly
// through debuginfod, and decoding it) runs in a DisassemblyRunner off the GUI thread; until it answers the view
// says so, and a failure (binary missing or replaced, no addresses) is shown in words instead of a table.
//
// A Python function has no machine code: the view says so, and that its lines are in the Source tab, instead of
// an error or an empty table.
//
// Use: setProfile() once per profile, then showFrame(frame) (or showFunction(name)) for the function the user picked.
// Thread: GUI thread.
class DisassemblyView : public QWidget {
    Q_OBJECT
public:
    explicit DisassemblyView(QWidget *parent = nullptr);

    // `sampleType` < 0: the profile's default.
    void setProfile(std::shared_ptr<const engine::Profile> profile, int sampleType = -1);
    void setSourceRoots(std::vector<std::string> roots) { m_sourceRoots = std::move(roots); }
    void showFunction(const QString &name);
    // The function of a frame: a Python frame's is said to have no machine code at once (no job runs), native
    // code's is disassembled as showFunction does.
    void showFrame(const engine::Frame &frame);

    DisassemblyModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }
    // Centres the hottest instruction (the one it opened on) in the view.
    void scrollToHottest();

Q_SIGNALS:
    // The function is shown (with its instructions, or with the reason why there are none).
    void functionShown(const QString &name);
    void failed(const QString &message);

private:
    void setupUi();
    void connectSignals();
    void showResult(const std::shared_ptr<const DisassemblyResult> &result);
    void showError(const QString &message);
    void showPythonFunction(const QString &name);

    std::shared_ptr<const engine::Profile> m_profile;
    int m_sampleType = -1;
    std::vector<std::string> m_sourceRoots;
    QString m_function;
    DisassemblyRunner *m_runner = nullptr;
    DisassemblyModel *m_model = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_notes = nullptr;
    QTableView *m_table = nullptr;
    QAction *m_showBytes = nullptr;
};

} // namespace emberline::ui
