#pragma once

#include "engine/annotate/disassembly.h"
#include "engine/model/profile.h"
#include "ui/common/latest_job.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// What a disassembly job gives back: the function's annotated instructions, the source text of the lines they
// belong to (file -> its lines, for the files found), and the sample type's unit; or why there is none. A Python
// function has no instructions and no error: `python` says why (CPython runs it as bytecode).
struct DisassemblyResult {
    engine::FunctionDisassembly function;
    bool python = false;
    std::map<std::string, std::vector<std::string>> sources;
    std::string unit;
    int64_t grandTotal = 0;
    QString error;
    bool cancelled = false;
};

// Disassembles one function of a profile on the thread pool (engine::disassembleFunctions: it reads ELF files and
// may ask debuginfod, which can take seconds, so never on the GUI thread), one request at a time through a
// LatestJob: a new request cancels the one under way and a late stale result is dropped. A name that only Python
// frames of the profile hold (engine::isPythonLine) is answered as such, without looking for a binary.
//
// Thread: lives on the GUI thread and emits there; the work runs on a pool thread over the immutable profile.
class DisassemblyRunner : public QObject {
    Q_OBJECT
public:
    explicit DisassemblyRunner(QObject *parent = nullptr);

    // `sampleType` < 0: the profile's default. `sourceRoots`: where sources are looked for besides their paths.
    void request(std::shared_ptr<const engine::Profile> profile, const QString &functionName, int sampleType,
                 std::vector<std::string> sourceRoots = {});
    bool isRunning() const { return m_job.isPending(); }
    // The request under way is dropped (its answer, if it still comes, is not emitted).
    void cancel() { m_job.cancel(); }

Q_SIGNALS:
    void ready(std::shared_ptr<const emberline::ui::DisassemblyResult> result);
    void failed(const QString &message);

private:
    LatestJob<std::shared_ptr<const DisassemblyResult>> m_job{this};
};

} // namespace emberline::ui
