#include "ui/jobs/disassembly_runner.h"
#include "ui/common/sample_types.h"

#include "engine/annotate/source_locator.h"
#include "engine/model/python_frame.h"
#include "engine/model/sample_filter.h"
#include "ui/common/logging.h"

#include <QElapsedTimer>

namespace emberline::ui {
namespace {

// Whether `name` is a Python function's alone: some location runs it as Python, and none as machine code (a
// script's `main` and the interpreter's share a name; the native one is disassembled).
bool isPythonOnly(const engine::Profile &profile, const std::string &name)
{
    bool python = false;
    for (const engine::Location &location : profile.locations()) {
        for (const engine::Line &line : location.lines) {
            if (line.functionIndex >= profile.functions().size() ||
                profile.str(profile.functions()[line.functionIndex].name) != name)
                continue;
            if (!engine::isPythonLine(profile, location, line))
                return false;
            python = true;
        }
    }
    return python;
}

std::shared_ptr<const DisassemblyResult> disassemble(const engine::Profile &profile, const std::string &name,
                                                     int sampleType, const std::vector<std::string> &sourceRoots,
                                                     const std::atomic<bool> *cancel)
{
    auto result = std::make_shared<DisassemblyResult>();
    if (isPythonOnly(profile, name)) {
        result->function.name = name;
        result->python = true;
        return result;
    }
    if (sampleType < 0 || static_cast<size_t>(sampleType) >= profile.sampleTypes().size())
        sampleType = initialSampleType(profile);
    if (sampleType < 0) {
        result->error = QStringLiteral("The profile has no sample types.");
        return result;
    }
    const std::vector<int64_t> perStack = engine::valuesPerStack(profile, sampleType, {});
    for (int64_t v : perStack)
        result->grandTotal += v;
    result->unit = profile.str(profile.sampleTypes()[sampleType].unit);
    engine::DisassemblyRequest request;
    request.matches = [&name](const std::string &candidate) { return candidate == name; };
    request.sampleType = sampleType;
    auto functions = engine::disassembleFunctions(profile, perStack, request, cancel);
    if (!functions) {
        result->cancelled = functions.error().code == engine::Error::Code::Cancelled;
        result->error = QString::fromStdString(functions.error().message);
        return result;
    }
    // The costliest of the functions of that name (a static function may exist in several units).
    result->function = std::move(functions->front());
    const engine::SourceLocator locator(sourceRoots);
    for (const engine::AnnotatedInstruction &insn : result->function.instructions) {
        if (insn.file.empty() || result->sources.count(insn.file))
            continue;
        auto source = locator.load(insn.file);
        result->sources[insn.file] = source ? std::move(source).value().lines : std::vector<std::string>{};
    }
    return result;
}

} // namespace

DisassemblyRunner::DisassemblyRunner(QObject *parent) : QObject(parent) {}

void DisassemblyRunner::request(std::shared_ptr<const engine::Profile> profile, const QString &functionName,
                                int sampleType, std::vector<std::string> sourceRoots)
{
    m_job.run(
        [profile = std::move(profile), name = functionName.toStdString(), sampleType,
         roots = std::move(sourceRoots)](const std::atomic<bool> *cancel) {
            QElapsedTimer timer;
            timer.start();
            auto result = disassemble(*profile, name, sampleType, roots, cancel);
            qCDebug(lcUiAnalysis) << "disassembly of" << QString::fromStdString(name) << "in" << timer.elapsed()
                                  << "ms:" << result->function.instructions.size() << "instructions";
            return result;
        },
        [this](const std::shared_ptr<const DisassemblyResult> &result) {
            if (result->cancelled)
                return;
            if (!result->error.isEmpty())
                Q_EMIT failed(result->error);
            else
                Q_EMIT ready(result);
        });
}

} // namespace emberline::ui
