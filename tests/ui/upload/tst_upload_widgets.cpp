// The upload widgets offscreen, found by objectName and driven by typing and clicking: settings validation
// messages, the API key masked and kept only in an owner-only file, and the Upload panel listing every flush
// with "what Datadog receives".

#include "engine/upload/upload_notifier.h"
#include "ui/upload/upload_panel.h"
#include "ui/upload/upload_panel_model.h"
#include "ui/upload/upload_settings_widget.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <sys/stat.h>

#include <thread>

using namespace emberline;

namespace {

const QString kKey = QStringLiteral("0123456789abcdef0123456789abcdef");

template <typename T> T *child(QWidget &parent, const char *name)
{
    T *w = parent.findChild<T *>(QLatin1String(name));
    if (!w)
        qFatal("no child %s", name);
    return w;
}

void typeInto(QLineEdit *edit, const QString &text)
{
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Delete);
    QTest::keyClicks(edit, text);
}

std::shared_ptr<const engine::UploadRecord> makeRecord(uint32_t seq, engine::UploadOutcome outcome, long status)
{
    auto r = std::make_shared<engine::UploadRecord>();
    r->flushSequence = seq;
    r->outcome = outcome;
    r->httpStatus = status;
    r->attempts = outcome == engine::UploadOutcome::Sent ? 2 : 1;
    r->finishedAtNs = 1'700'000'000'000'000'000;
    r->requestLatencyNs = 12'500'000;
    r->bodyBytes = 48'000;
    r->endpoint = "http://localhost:8126/profiling/v1/input";
    r->tags = {{"service", "checkout"}, {"profile_seq", std::to_string(seq - 1)}};
    r->headers = {{"DD-EVP-ORIGIN", "emberline"}};
    r->eventJson = R"({"version":"4","family":"native","attachments":["code-provenance.json","profile.pprof"]})";
    r->attachments = {{"code-provenance.json", 300, 1200, "zstd"}, {"profile.pprof", 47'000, 160'000, "zstd"}};
    r->message = outcome == engine::UploadOutcome::Sent ? "HTTP 202" : "HTTP 413: the upload is too large";
    return r;
}

} // namespace

class TestUploadWidgets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        for (const char *v : {"DD_API_KEY", "DD_TAGS", "DD_SERVICE", "DD_TRACE_AGENT_URL", "DD_PROFILING_AGENTLESS"})
            qunsetenv(v);
    }

    // If this fails, the user can start an upload with tags or URLs that Datadog would refuse, without being
    // told which field is wrong and why.
    void validationMessages()
    {
        ui::UploadSettingsWidget w;
        auto *validation = child<QLabel>(w, "uploadValidation");
        QVERIFY(w.isValid());
        typeInto(child<QLineEdit>(w, "uploadTags"), QStringLiteral("team:"));
        QVERIFY(!w.isValid());
        QVERIFY2(validation->text().contains(QStringLiteral("team:")) &&
                     validation->text().contains(QStringLiteral("ends with ':'")),
                 qPrintable(validation->text()));
        typeInto(child<QLineEdit>(w, "uploadTags"), QStringLiteral("team:payments, region:eu"));
        QVERIFY2(w.isValid(), qPrintable(validation->text()));
        typeInto(child<QLineEdit>(w, "uploadService"), QStringLiteral("a,b"));
        QVERIFY(validation->text().contains(QStringLiteral("comma")));
        typeInto(child<QLineEdit>(w, "uploadService"), QStringLiteral("checkout"));
        typeInto(child<QLineEdit>(w, "uploadAgentUrl"), QStringLiteral("ftp://agent"));
        QVERIFY2(validation->text().contains(QStringLiteral("agent URL")), qPrintable(validation->text()));
        typeInto(child<QLineEdit>(w, "uploadAgentUrl"), QStringLiteral("127.0.0.1:8126"));
        QVERIFY(w.isValid());
        auto settings = w.resolve();
        QVERIFY(settings.ok());
        QCOMPARE(QString::fromStdString(settings->agentUrl), QStringLiteral("http://127.0.0.1:8126"));
        QCOMPARE(QString::fromStdString(settings->service), QStringLiteral("checkout"));
    }

    // If this fails, the API key is shown on screen, stored where others can read it, or kept in QSettings.
    void apiKeyIsMaskedAndStoredOwnerOnly()
    {
        QTemporaryDir dir;
        const QString keyPath = dir.filePath(QStringLiteral("emberline/datadog-api-key"));
        const QString iniPath = dir.filePath(QStringLiteral("settings.ini"));
        {
            ui::UploadSettingsWidget w;
            w.setApiKeyPath(keyPath);
            QTest::mouseClick(child<QRadioButton>(w, "uploadModeAgentless"), Qt::LeftButton);
            QVERIFY(child<QRadioButton>(w, "uploadModeAgentless")->isChecked());
            auto *key = child<QLineEdit>(w, "uploadApiKey");
            QCOMPARE(key->echoMode(), QLineEdit::Password);
            QVERIFY(!w.isValid());
            QVERIFY(w.validationMessage().contains(QStringLiteral("API key")));
            QTest::keyClicks(key, QStringLiteral("not-a-key"));
            QVERIFY(!w.isValid());
            QVERIFY(!w.validationMessage().contains(QStringLiteral("not-a-key")));
            typeInto(key, kKey);
            QVERIFY2(w.isValid(), qPrintable(w.validationMessage()));
            QSettings ini(iniPath, QSettings::IniFormat);
            QVERIFY(w.save(ini).ok());
            ini.sync();
            QVERIFY(key->text().isEmpty());
            QVERIFY(child<QLabel>(w, "uploadApiKeyState")->text().contains(QStringLiteral("saved")));
        }
        struct stat st {};
        QCOMPARE(stat(keyPath.toLocal8Bit().constData(), &st), 0);
        QCOMPARE(st.st_mode & 0777, 0600u);
        QFile ini(iniPath);
        QVERIFY(ini.open(QIODevice::ReadOnly));
        const QByteArray iniText = ini.readAll();
        QVERIFY(iniText.contains("agentless"));
        QVERIFY2(!iniText.contains(kKey.toLatin1()), "the API key is in QSettings");

        ui::UploadSettingsWidget reloaded;
        reloaded.setApiKeyPath(keyPath);
        QSettings settings(iniPath, QSettings::IniFormat);
        reloaded.load(settings);
        QVERIFY(child<QRadioButton>(reloaded, "uploadModeAgentless")->isChecked());
        QVERIFY(child<QLineEdit>(reloaded, "uploadApiKey")->text().isEmpty());
        auto resolved = reloaded.resolve();
        QVERIFY(resolved.ok());
        QCOMPARE(QString::fromStdString(resolved->apiKey), kKey);
        QTest::mouseClick(child<QPushButton>(reloaded, "uploadForgetApiKey"), Qt::LeftButton);
        QVERIFY(!QFile::exists(keyPath));
        QVERIFY(!reloaded.isValid());
    }

    // If this fails, the panel's model breaks Qt's model contract (rows, indexes, signals).
    void panelModelContract()
    {
        ui::UploadPanelModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.addRecord(makeRecord(1, engine::UploadOutcome::Sent, 202));
        model.addRecord(makeRecord(2, engine::UploadOutcome::Rejected, 413));
        model.addRecord(makeRecord(3, engine::UploadOutcome::Dropped, 0));
        QCOMPARE(model.rowCount(), 3);
        using M = ui::UploadPanelModel;
        QCOMPARE(model.index(0, M::StatusColumn).data().toString(), QStringLiteral("sent (HTTP 202)"));
        QCOMPARE(model.index(1, M::StatusColumn).data().toString(), QStringLiteral("rejected (HTTP 413)"));
        QCOMPARE(model.index(2, M::StatusColumn).data().toString(), QStringLiteral("dropped"));
        QCOMPARE(model.index(0, M::RetriesColumn).data().toInt(), 1);
        QCOMPARE(model.index(0, M::LatencyColumn).data().toString(), QStringLiteral("12.5 ms"));
        QVERIFY(model.index(0, M::TagsColumn).data().toString().contains(QStringLiteral("service:checkout")));
        QVERIFY(model.index(1, M::FlushColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("too large")));
        QCOMPARE(model.totals().sent, 1);
        QCOMPARE(model.totals().refused, 1);
        QCOMPARE(model.totals().dropped, 1);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    // If this fails, the user cannot see what Datadog receives for a flush, or records from the uploader
    // thread never reach the panel.
    void panelShowsWhatDatadogReceives()
    {
        ui::UploadPanel panel;
        panel.resize(800, 600);
        engine::UploadNotifier notifier;
        panel.follow(&notifier);
        std::thread uploaderThread([&] { notifier.post(makeRecord(1, engine::UploadOutcome::Sent, 202)); });
        uploaderThread.join();
        QTRY_COMPARE(child<QTableView>(panel, "uploadTable")->model()->rowCount(), 1);
        const QString json = child<QPlainTextEdit>(panel, "uploadEventJson")->toPlainText();
        QVERIFY2(json.contains(QStringLiteral("\"version\": \"4\"")) && json.count(QLatin1Char('\n')) > 3,
                 qPrintable(json));
        auto *attachments = child<QTreeWidget>(panel, "uploadAttachments");
        QCOMPARE(attachments->topLevelItemCount(), 2);
        QCOMPARE(attachments->topLevelItem(1)->text(0), QStringLiteral("profile.pprof"));
        QCOMPARE(attachments->topLevelItem(1)->text(3), QStringLiteral("zstd"));
        QVERIFY(child<QLabel>(panel, "uploadDestination")->text().contains(QStringLiteral("/profiling/v1/input")));
        QVERIFY(child<QLabel>(panel, "uploadSummary")->text().contains(QStringLiteral("1 sent")));

        panel.addRecord(makeRecord(2, engine::UploadOutcome::Rejected, 413));
        QVERIFY(child<QLabel>(panel, "uploadMessage")->text().contains(QStringLiteral("too large")));
        QVERIFY(child<QLabel>(panel, "uploadSummary")->text().contains(QStringLiteral("1 refused")));
        // Picking an older row shows that flush and stops following new ones.
        auto *table = child<QTableView>(panel, "uploadTable");
        table->setCurrentIndex(table->model()->index(0, 0));
        panel.addRecord(makeRecord(3, engine::UploadOutcome::Sent, 202));
        QCOMPARE(table->currentIndex().row(), 0);
        QCOMPARE(child<QLabel>(panel, "uploadMessage")->text(), QStringLiteral("HTTP 202"));
    }
};

QTEST_MAIN(TestUploadWidgets)
#include "tst_upload_widgets.moc"
