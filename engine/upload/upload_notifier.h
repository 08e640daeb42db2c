#pragma once

#include "engine/upload/upload_record.h"

#include <QObject>

#include <memory>

namespace emberline::engine {

// Turns the uploader's callback into a Qt signal: post() may be called from the uploader thread; a receiver
// on the GUI thread gets recordReady through a queued connection. The record is immutable, so sharing it is
// safe.
//
// Thread: lives on the thread that created it (the GUI thread); post() from any thread.
class UploadNotifier : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    void post(std::shared_ptr<const UploadRecord> record) { Q_EMIT recordReady(std::move(record)); }

Q_SIGNALS:
    void recordReady(std::shared_ptr<const emberline::engine::UploadRecord> record);
};

} // namespace emberline::engine

Q_DECLARE_METATYPE(std::shared_ptr<const emberline::engine::UploadRecord>)
