// A library loaded when first needed (engine/common/shared_library.h): its functions are bound and callable, and a
// library or a function that is not there is named in the error, never a crash. The engine's two such libraries
// (libcurl for uploads, libdebuginfod for fetches) load on this machine, with every function the engine calls.

#include "engine/common/shared_library.h"
#include "engine/symbols/debuginfod_api.h"
#include "engine/upload/curl_api.h"

#include <QTest>

#include <unistd.h>

using namespace emberline::engine;

class TestSharedLibrary : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bindsAndCalls()
    {
        SharedLibrary libc("libc.so.6");
        QVERIFY2(libc.loaded(), libc.error().c_str());
        pid_t (*ownPid)() = nullptr;
        QVERIFY(libc.bind(ownPid, "getpid"));
        QCOMPARE(ownPid(), ::getpid());
        QVERIFY(libc.error().empty());
    }

    void missingLibraryNamed()
    {
        SharedLibrary missing("libemberline-none.so.7");
        QVERIFY(!missing.loaded());
        QVERIFY2(missing.error().find("libemberline-none.so.7") != std::string::npos, missing.error().c_str());
        void (*function)() = nullptr;
        QVERIFY(!missing.bind(function, "anything"));
        QVERIFY(function == nullptr);
    }

    void missingFunctionNamed()
    {
        SharedLibrary libc("libc.so.6");
        void (*function)() = nullptr;
        QVERIFY(!libc.bind(function, "emberline_no_such_function"));
        QVERIFY2(libc.error().find("libc.so.6 has no function emberline_no_such_function") != std::string::npos,
                 libc.error().c_str());
    }

    // The packages the .deb depends on (libcurl4, libdebuginfod1) are installed here: both load whole.
    void engineLibrariesLoad()
    {
        std::string why;
        const CurlApi *curl = curlApi(&why);
        QVERIFY2(curl != nullptr, why.c_str());
        QCOMPARE(QByteArray(curl->easyStrerror(CURLE_OK)), QByteArray("No error"));
        const DebuginfodApi *debuginfod = debuginfodApi(&why);
        QVERIFY2(debuginfod != nullptr, why.c_str());
        debuginfod_client *client = debuginfod->begin();
        QVERIFY(client != nullptr);
        debuginfod->end(client);
    }
};

QTEST_GUILESS_MAIN(TestSharedLibrary)
#include "tst_shared_library.moc"
