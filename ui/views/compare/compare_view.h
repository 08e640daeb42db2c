#pragma once

#include "engine/analysis/analysis.h"

#include <QWidget>

#include <memory>

class QStackedWidget;

namespace emberline::ui {

class CompareExplorer;
class ComparisonRunner;
class LoadErrorPage;
class LoadingPage;

// One compare tab: two profiles (files or session folders) through their life. While they load it names both
// with a busy bar and Cancel; if either fails it shows the error (which names the side and the file) with Retry
// and Close; once both are loaded it shows a CompareExplorer. The new profile may come already loaded from
// another tab.
//
// Thread: GUI thread; loading runs on the pool through ComparisonRunner.
class CompareView : public QWidget {
    Q_OBJECT
public:
    enum class State { Loading, Failed, Ready };

    CompareView(const QString &basePath, const QString &newPath,
                std::shared_ptr<const engine::LoadedProfile> loadedNew = nullptr, QWidget *parent = nullptr);

    void load();
    const QString &basePath() const { return m_basePath; }
    const QString &newPath() const { return m_newPath; }
    QString title() const;
    State state() const { return m_state; }
    QString errorMessage() const;
    CompareExplorer *explorer() const { return m_explorer; }

Q_SIGNALS:
    void loadFinished(bool ok);
    void closeRequested();

private:
    void setupUi();
    void connectSignals();
    void onLoaded(std::shared_ptr<const engine::LoadedProfile> next, std::shared_ptr<const engine::LoadedProfile> base);
    void onFailed(const QString &message);

    QString m_basePath;
    QString m_newPath;
    std::shared_ptr<const engine::LoadedProfile> m_loadedNew;
    State m_state = State::Loading;
    ComparisonRunner *m_runner = nullptr;
    QStackedWidget *m_stack = nullptr;
    LoadingPage *m_loadingPage = nullptr;
    LoadErrorPage *m_errorPage = nullptr;
    CompareExplorer *m_explorer = nullptr;
};

} // namespace emberline::ui
