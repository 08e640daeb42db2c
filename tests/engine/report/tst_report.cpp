// `emberline report`'s builders (engine/report/) in process, on a hand-made profile where every number is known:
// the top-functions table and its JSON, the difference against a base (self and total as NEW minus BASE, with the
// base's values beside them), the sample type chosen by name, folded stacks, and the per-line listing.
// tests/app runs the same through the command line, on real files and against go tool pprof.
#include "engine/report/folded_writer.h"
#include "engine/report/list_report.h"
#include "engine/report/report.h"
#include "engine/report/sample_type.h"

#include "../test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <map>

using namespace emberline;
using namespace emberline::engine;
using test::ProfileBuilder;

namespace {

// main → work (line 10) 30 ns, main → work (line 20) 10 ns, main → idle 20 ns, main alone 5 ns; one sample each.
// `workScale` multiplies work's samples (the "new" profile of a comparison doubles them).
Profile profile(int64_t workScale = 1)
{
    ProfileBuilder b({{"samples", "count"}, {"cpu", "nanoseconds"}});
    const uint32_t main = b.location({b.function("main", "main.c")});
    const uint32_t workFn = b.function("work", "work.c");
    const uint32_t work10 = b.location({workFn});
    const uint32_t work20 = b.location({workFn});
    b.profile().locations()[work20].lines[0].line = 20;
    const uint32_t idle = b.location({b.function("idle", "idle.c")});
    b.sample({work10, main}, {1, 30 * workScale});
    b.sample({work20, main}, {1, 10 * workScale});
    b.sample({idle, main}, {1, 20});
    b.sample({main}, {1, 5});
    return b.take();
}

// name -> (self, total) from a report's JSON "functions".
std::map<QString, std::pair<qint64, qint64>> functionsOf(const QJsonObject &root)
{
    std::map<QString, std::pair<qint64, qint64>> out;
    for (const QJsonValue v : root.value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        out[f.value(QStringLiteral("name")).toString()] = {f.value(QStringLiteral("self")).toInteger(),
                                                           f.value(QStringLiteral("total")).toInteger()};
    }
    return out;
}

QJsonObject parsed(const std::string &json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}

} // namespace

class TestReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, the top-functions table sums self or total wrongly (a function's two locations are one
    // function; main's total holds every sample), or the chosen sample type is not the one reported.
    void topFunctionsJson()
    {
        ReportOptions options;
        options.sampleType = "cpu";
        options.json = true;
        auto report = buildReport(profile(), options);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const QJsonObject root = parsed(report.value());
        QCOMPARE(root.value(QStringLiteral("samples")).toInteger(), qint64(4));
        const auto functions = functionsOf(root);
        QCOMPARE(functions.size(), size_t(3));
        QCOMPARE(functions.at(QStringLiteral("work")), std::make_pair(qint64(40), qint64(40)));
        QCOMPARE(functions.at(QStringLiteral("idle")), std::make_pair(qint64(20), qint64(20)));
        QCOMPARE(functions.at(QStringLiteral("main")), std::make_pair(qint64(5), qint64(65)));
        // Largest self first.
        QCOMPARE(root.value(QStringLiteral("functions")).toArray().first().toObject().value(QStringLiteral("name")),
                 QJsonValue(QStringLiteral("work")));
    }

    // If this fails, --top does not cut the text table to the largest functions, or the header's total is wrong.
    void topFunctionsText()
    {
        ReportOptions options;
        options.sampleType = "cpu";
        options.top = 2;
        auto report = buildReport(profile(), options);
        QVERIFY(report);
        const QString text = QString::fromStdString(report.value());
        QVERIFY2(text.contains(QLatin1String("work")) && text.contains(QLatin1String("idle")), qPrintable(text));
        QVERIFY2(!text.contains(QLatin1String("main")), qPrintable(text)); // third by self
        QVERIFY2(text.contains(QLatin1String("65")), qPrintable(text));    // the total, 65 ns
    }

    // If this fails, `report NEW --base BASE` does not report NEW minus BASE per function (as go tool pprof
    // -diff_base does), or drops the base's own values from the JSON.
    void differenceAgainstBase()
    {
        ReportOptions options;
        options.sampleType = "cpu";
        options.json = true;
        auto report = buildDiffReport(profile(2), profile(1), options);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const QJsonObject root = parsed(report.value());
        bool sawWork = false;
        for (const QJsonValue v : root.value(QStringLiteral("functions")).toArray()) {
            const QJsonObject f = v.toObject();
            const QString name = f.value(QStringLiteral("name")).toString();
            const qint64 self = f.value(QStringLiteral("self")).toInteger();
            const qint64 baseSelf = f.value(QStringLiteral("base_self")).toInteger();
            const qint64 baseTotal = f.value(QStringLiteral("base_total")).toInteger();
            const qint64 total = f.value(QStringLiteral("total")).toInteger();
            if (name == QLatin1String("work")) {
                sawWork = true;
                QCOMPARE(self, qint64(40)); // 80 - 40
                QCOMPARE(total, qint64(40));
                QCOMPARE(baseSelf, qint64(40));
                QCOMPARE(baseTotal, qint64(40));
            } else if (name == QLatin1String("main")) {
                QCOMPARE(self, qint64(0));
                QCOMPARE(total, qint64(40)); // 105 - 65
                QCOMPARE(baseTotal, qint64(65));
            } else if (name == QLatin1String("idle")) {
                QCOMPARE(self, qint64(0));
                QCOMPARE(baseSelf, qint64(20));
            }
        }
        QVERIFY(sawWork);
        QCOMPARE(root.value(QStringLiteral("base")).toObject().value(QStringLiteral("total")).toInteger(), qint64(65));
    }

    // If this fails, a sample type is not found by name, or an unknown name is not a clear error naming the
    // types there are.
    void sampleTypeByName()
    {
        const Profile p = profile();
        auto cpu = resolveSampleType(p, "cpu");
        QVERIFY(cpu);
        QCOMPARE(cpu.value(), 1);
        auto missing = resolveSampleType(p, "alloc_space");
        QVERIFY(!missing);
        const QString message = QString::fromStdString(missing.error().message);
        QVERIFY2(message.contains(QLatin1String("alloc_space")) && message.contains(QLatin1String("cpu")),
                 qPrintable(message));
    }

    // If this fails, `report --base` lists functions whose values did not change, drops one that did, or no
    // longer refuses to normalize a base with nothing in it.
    void differenceListsOnlyChanges()
    {
        ReportOptions options;
        options.sampleType = "cpu";
        options.json = true;
        auto report = buildDiffReport(profile(2), profile(1), options);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const auto functions = functionsOf(parsed(report.value()));
        QCOMPARE(functions.size(), size_t(2)); // idle is 20 ns on both sides
        QCOMPARE(functions.at(QStringLiteral("work")), std::make_pair(qint64(40), qint64(40)));
        QCOMPARE(functions.at(QStringLiteral("main")), std::make_pair(qint64(0), qint64(40)));
        options.json = false;
        auto text = buildDiffReport(profile(2), profile(1), options);
        QVERIFY(text);
        QVERIFY2(text->find("Showing 2 of 2 functions that changed") != std::string::npos, text->c_str());
        QVERIFY2(text->find("work") < text->find("main\n"), text->c_str()); // by the size of the self change
        auto same = buildDiffReport(profile(), profile(), options);
        QVERIFY(same);
        QVERIFY2(same->find("No function changed.") != std::string::npos, same->c_str());
        options.normalize = true;
        ProfileBuilder empty({{"samples", "count"}, {"cpu", "nanoseconds"}});
        auto refused = buildDiffReport(profile(), empty.take(), options);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("cannot be normalized") != std::string::npos,
                 refused.error().message.c_str());
    }

    // If this fails, folded stacks are not one line per distinct stack, root first, with the stack's value in
    // the chosen sample type (work's two locations are one frame name: one line of 40).
    void foldedStacks()
    {
        auto folded = writeFoldedStacks(profile(), "cpu");
        QVERIFY2(folded, folded ? "" : folded.error().message.c_str());
        QStringList lines = QString::fromStdString(folded.value()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        lines.sort();
        QCOMPARE(lines, QStringList({QStringLiteral("main 5"), QStringLiteral("main;idle 20"),
                                     QStringLiteral("main;work 40")}));
    }

    // If this fails, --list does not split a function's cost by line (work: line 10 holds 30, line 20 holds 10).
    void listByLine()
    {
        ListOptions options;
        options.pattern = "^work$";
        options.sampleType = "cpu";
        options.json = true;
        auto report = buildListReport(profile(), options);
        QVERIFY2(report, report ? "" : report.error().message.c_str());
        const QJsonArray functions = parsed(report.value()).value(QStringLiteral("functions")).toArray();
        QCOMPARE(functions.size(), qsizetype(1));
        const QJsonObject work = functions.first().toObject();
        QCOMPARE(work.value(QStringLiteral("name")).toString(), QStringLiteral("work"));
        QCOMPARE(work.value(QStringLiteral("total")).toInteger(), qint64(40));
        std::map<qint64, qint64> selfByLine;
        for (const QJsonValue v : work.value(QStringLiteral("lines")).toArray())
            selfByLine[v.toObject().value(QStringLiteral("line")).toInteger()] =
                v.toObject().value(QStringLiteral("self")).toInteger();
        QCOMPARE(selfByLine, (std::map<qint64, qint64>{{10, 30}, {20, 10}}));
    }
};

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
