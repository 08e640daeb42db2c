#include "ui/common/frame_source.h"

#include "engine/model/python_frame.h"

#include <QCoreApplication>
#include <QStringList>

namespace emberline::ui {
namespace {

QString text(const char *source)
{
    return QCoreApplication::translate("FrameSource", source);
}

QString withLine(QString file, int64_t line)
{
    if (line > 0)
        file += QLatin1Char(':') + QString::number(line);
    return file;
}

} // namespace

QList<QPair<QString, QString>> frameSourceRows(const engine::Frame &frame)
{
    QList<QPair<QString, QString>> rows;
    if (engine::isPythonFrame(frame)) {
        rows.append(
            {text("Python frame"), withLine(QString::fromStdString(engine::pythonImportPath(frame.file)), frame.line)});
        rows.append({text("File"), QString::fromStdString(frame.file)});
        rows.append({text("Module"), QString::fromStdString(engine::pythonModuleName(frame.file))});
        return rows;
    }
    if (!frame.file.empty())
        rows.append({text("Source"), withLine(QString::fromStdString(frame.file), frame.line)});
    if (!frame.module.empty())
        rows.append({text("Module"), QString::fromStdString(frame.module)});
    return rows;
}

QString frameSourceText(const engine::Frame &frame)
{
    QStringList lines;
    const bool python = engine::isPythonFrame(frame);
    for (const auto &[label, value] : frameSourceRows(frame))
        lines << (python ? label + QStringLiteral(": ") + value : value);
    return lines.join(QLatin1Char('\n'));
}

} // namespace emberline::ui
