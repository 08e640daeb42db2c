#pragma once

#include "engine/analysis/analysis.h"
#include "engine/analysis/transforms.h"

#include <QByteArray>
#include <QImage>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

namespace emberline::ui {

// Writes what a view shows to a file on the thread pool: the flame graph's SVG text or picture (made on the GUI
// thread, where the widget is, and only written here), or the view's samples as a pprof file (viewProfile, then
// the pprof writer). One export at a time; each ends with `saved` or `failed` (naming the file and the problem).
//
// Thread: lives on the GUI thread and emits there; the writing runs on a pool thread over values it owns.
class ViewExporter : public QObject {
    Q_OBJECT
public:
    explicit ViewExporter(QObject *parent = nullptr);
    ~ViewExporter() override;

    void saveSvg(const QString &path, QByteArray svg);
    void savePng(const QString &path, QImage image);
    void savePprof(const QString &path, std::shared_ptr<const engine::LoadedProfile> source,
                   std::vector<engine::Transform> transforms, engine::SampleFilter filter);
    bool isRunning() const;

Q_SIGNALS:
    void saved(const QString &path);
    void failed(const QString &message);

private:
    void start(const QString &path, std::function<QString()> work);

    struct Pending;
    std::unique_ptr<Pending> m_pending;
};

} // namespace emberline::ui
