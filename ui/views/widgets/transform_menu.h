#pragma once

#include "engine/analysis/transforms.h"

#include <QString>

#include <functional>

class QMenu;

namespace emberline::ui {

// Adds the transforms of one function to a context menu (a right-click on a frame in the flame graph or a
// table): Focus on, Ignore, Hide, Collapse recursion, Merge into caller. Focus, Ignore and Hide match the
// function's exact name (its regular expression is anchored and escaped), as pprof's options would with the
// same pattern. `apply` receives the chosen step.
//
// Thread: GUI thread.
void addTransformActions(QMenu *menu, const QString &functionName, const std::function<void(engine::Transform)> &apply);

} // namespace emberline::ui
