#pragma once

// The live stage's last update, taken on its thread: what the stage's tests read after each flush.

#include "engine/stage/live_stage.h"

#include <memory>
#include <mutex>

namespace emberline::test {

struct LastUpdate {
    std::mutex mutex;
    std::shared_ptr<const engine::LiveUpdate> update;
    engine::LiveStage::Publish callback()
    {
        return [this](std::shared_ptr<const engine::LiveUpdate> u) {
            std::lock_guard lock(mutex);
            update = std::move(u);
        };
    }
    std::shared_ptr<const engine::LiveUpdate> get()
    {
        std::lock_guard lock(mutex);
        return update;
    }
};

} // namespace emberline::test
