#pragma once

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"
#include "ui/models/caller_callee_table_model.h"

#include <memory>
#include <string>

namespace emberline::ui {

// One side of the caller/callee view of the selected function: its callers, or its callees, each with the
// value of the samples that pass through that edge and its share of the selected function's total.
//
// Thread: GUI thread; the CallerCallee it shows was computed on a worker.
class CallerCalleeModel : public CallerCalleeEdgeModel<engine::CallerCallee> {
    Q_OBJECT
public:
    enum Column { NameColumn, ValueColumn, ShareColumn, ColumnCount };

    explicit CallerCalleeModel(Side side, QObject *parent = nullptr);

private:
    QVariant edgeValue(size_t row, int column, int role) const override;
    QVariant valueHeader(int section) const override;
};

} // namespace emberline::ui
