#pragma once

// Shared by the live-session widget tests: target paths, waiting for a live view's flushes and analyses, and
// reading what its flame graph and table show.

#include "engine/session/profiling_session.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/models/top_functions_model.h"
#include "ui/views/live_session_view.h"
#include "ui/views/profile_explorer.h"
#include "ui/views/top_functions_view.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

namespace emberline::ui::test {

inline QString targetPath(const char *name)
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

template <typename T>
T *child(QObject *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

// The explorer of `view` shows the latest derived state: no merge, derivation or analysis is pending.
inline bool settled(LiveSessionView *view)
{
    ProfileExplorer *explorer = view->explorer();
    return explorer && explorer->analysis() && !explorer->isAnalysing() && !view->isUpdating();
}

inline bool waitSettled(LiveSessionView *view, int timeoutMs = 20000)
{
    // Settled twice in a row, 100 ms apart: a queued flush may start new work right after.
    return QTest::qWaitFor([&] {
        if (!settled(view))
            return false;
        QTest::qWait(100);
        return settled(view);
    }, timeoutMs);
}

// Total of the largest flame-graph node with this name; 0 when absent.
inline int64_t flameTotal(LiveSessionView *view, const char *name)
{
    const FlameGraphLayout &layout = view->explorer()->flameGraph()->layout();
    const uint32_t node = layout.largestNodeNamed(name);
    return node == engine::kNoIndex ? 0 : layout.tree()->node(node).total;
}

// Whether the top-functions table lists the function with a non-zero total.
inline bool tableHas(LiveSessionView *view, const QString &name)
{
    auto *table = view->explorer()->findChild<TopFunctionsView *>();
    TopFunctionsModel *model = table->model();
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->index(row, 0).data().toString() == name)
            return true;
    }
    return false;
}

} // namespace emberline::ui::test
