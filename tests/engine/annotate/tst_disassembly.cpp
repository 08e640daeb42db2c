// Disassembly of real binaries from tests/targets against hand-made profiles whose addresses are read from the
// binaries with plain libelf: costs land on the instruction that holds each address, a file whose build id
// differs from the recording's is refused (and one with the right id is then found by build id), and capstone
// decodes known bytes.

#include "engine/annotate/disassembler.h"
#include "engine/annotate/disassembly.h"
#include "engine/report/disasm_report.h"
#include "hot_loop_profile.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;
using namespace emberline::test;

class TestDisassembly : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a sample's cost is put on the wrong instruction, or the function's range, bytes or lines
    // are read wrongly from the recorded file.
    void costsLandOnTheInstructionAtTheirAddress()
    {
        const std::string buildId = ElfTestImage::fromFile(kHotLoop)->buildId();
        QVERIFY(!buildId.empty());
        HotLoopProfile h = hotLoopProfile(kHotLoop, buildId);
        QVERIFY(h.spinAddress != 0);
        const auto values = perStack(h.profile);
        auto spin = engine::disassembleFunctions(h.profile, values, request("spin"));
        QVERIFY2(spin.ok(), spin ? "" : spin.error().message.c_str());
        QCOMPARE(spin->size(), size_t(1));
        const engine::FunctionDisassembly &fn = spin->front();
        QVERIFY2(fn.error.empty(), fn.error.c_str());
        QCOMPARE(fn.binary, kHotLoop);
        QCOMPARE(fn.origin, std::string("recorded path"));
        QCOMPARE(fn.buildId, buildId);
        QCOMPARE(fn.start, h.spinAddress);
        QCOMPARE(fn.self, int64_t(5));
        QCOMPARE(fn.total, int64_t(5));
        QVERIFY(fn.instructions.size() > 5);
        QCOMPARE(fn.instructions.front().address, h.spinAddress);
        QCOMPARE(fn.instructions.front().self, int64_t(5));
        int64_t self = 0;
        bool hasLoopLine = false;
        for (const auto &insn : fn.instructions) {
            self += insn.self;
            hasLoopLine |= QString::fromStdString(insn.file).endsWith(QLatin1String("hot_loop.c")) && insn.line > 0;
        }
        QCOMPARE(self, int64_t(5));
        QVERIFY(hasLoopLine);
        QCOMPARE(fn.instructions.back().text, std::string("ret"));

        auto main = engine::disassembleFunctions(h.profile, values, request("main"));
        QVERIFY(main.ok());
        QCOMPARE(main->front().self, int64_t(3));
        QCOMPARE(main->front().total, int64_t(8));
        QCOMPARE(main->front().instructions.front().total, int64_t(8));
    }

    // If this fails, a binary that is not the one that ran (another build id) is annotated with its costs.
    void refusesAFileWhoseBuildIdDiffers()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath(QStringLiteral("hot_loop"));
        QVERIFY(QFile::copy(QString::fromStdString(kOther), copy));
        const std::string buildId = ElfTestImage::fromFile(kHotLoop)->buildId();
        const std::string otherId = ElfTestImage::fromFile(kOther)->buildId();
        QVERIFY(buildId != otherId && !otherId.empty());
        HotLoopProfile h = hotLoopProfile(copy.toStdString(), buildId);
        const auto values = perStack(h.profile);
        auto result = engine::disassembleFunctions(h.profile, values, request("spin"));
        QVERIFY(result.ok());
        const engine::FunctionDisassembly &fn = result->front();
        QVERIFY(fn.instructions.empty());
        const QString error = QString::fromStdString(fn.error);
        QVERIFY2(error.contains(copy) && error.contains(QString::fromStdString(buildId)) &&
                     error.contains(QString::fromStdString(otherId)) && error.contains(QLatin1String("refused")),
                 qPrintable(error));

        // The report says it too, and fails: nothing could be annotated.
        engine::DisasmOptions options;
        options.pattern = "^spin$";
        options.debugDirectories = {};
        auto report = engine::buildDisasmReport(h.profile, options);
        QVERIFY(!report.ok());
        QVERIFY2(QString::fromStdString(report.error().message).contains(QString::fromStdString(otherId)),
                 report.error().message.c_str());

        // The right file under a debug directory's .build-id tree is used instead, and the refusal noted.
        const QString byId = dir.filePath(
            QStringLiteral("debug/.build-id/%1/%2")
                .arg(QString::fromStdString(buildId.substr(0, 2)), QString::fromStdString(buildId.substr(2))));
        QVERIFY(QDir().mkpath(QFileInfo(byId).absolutePath()));
        QVERIFY(QFile::copy(QString::fromStdString(kHotLoop), byId));
        auto found = engine::disassembleFunctions(
            h.profile, values, request("spin", {dir.filePath(QStringLiteral("debug")).toStdString()}));
        QVERIFY(found.ok());
        QVERIFY2(found->front().error.empty(), found->front().error.c_str());
        QCOMPARE(found->front().origin, std::string("debug directory"));
        QCOMPARE(found->front().instructions.front().self, int64_t(5));
        QVERIFY(!found->front().notes.empty() &&
                QString::fromStdString(found->front().notes.front()).contains(QLatin1String("refused")));
    }

    // If this fails, a missing file is not said so, or a file without addresses gets a listing of nothing.
    void badInputIsAnError()
    {
        const std::string buildId = ElfTestImage::fromFile(kHotLoop)->buildId();
        HotLoopProfile missing = hotLoopProfile("/nonexistent/hot_loop", buildId);
        auto result = engine::disassembleFunctions(missing.profile, perStack(missing.profile), request("spin"));
        QVERIFY(result.ok());
        QVERIFY2(
            QString::fromStdString(result->front().error).contains(QLatin1String("/nonexistent/hot_loop: not found")),
            result->front().error.c_str());

        ProfileBuilder b({{"cpu-samples", "count"}});
        const uint32_t f = b.function("spin", "hot_loop.c");
        b.sample({b.location({f})}, {1});
        engine::Profile noAddresses = b.take();
        auto none = engine::disassembleFunctions(noAddresses, perStack(noAddresses), request("spin"));
        QVERIFY(!none.ok());
        QVERIFY2(QString::fromStdString(none.error().message).contains(QLatin1String("no instruction addresses")),
                 none.error().message.c_str());

        HotLoopProfile h = hotLoopProfile(kHotLoop, buildId);
        auto noMatch = engine::disassembleFunctions(h.profile, perStack(h.profile), request("nothing_is_named_so"));
        QVERIFY(!noMatch.ok());
        engine::DisasmOptions options;
        options.pattern = "(unclosed";
        auto badRegex = engine::buildDisasmReport(h.profile, options);
        QVERIFY(!badRegex.ok());
        QVERIFY(
            QString::fromStdString(badRegex.error().message).contains(QLatin1String("not a valid regular expression")));
    }

    // If this fails, capstone is driven wrongly: wrong mode, or undecodable bytes end the listing early.
    void decodesKnownBytes()
    {
        const std::vector<uint8_t> code = {0x55, 0x48, 0x89, 0xe5, 0x06, 0x5d, 0xc3};
        auto decoded = engine::decodeInstructions(EM_X86_64, true, code, 0x1000);
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->size(), size_t(5));
        QCOMPARE(decoded.value()[0].text, std::string("push rbp"));
        QCOMPARE(decoded.value()[1].text, std::string("mov rbp, rsp"));
        QCOMPARE(decoded.value()[1].address, uint64_t(0x1001));
        QCOMPARE(decoded.value()[2].text, std::string("(bad)")); // push es does not exist in 64-bit mode
        QCOMPARE(decoded.value()[3].text, std::string("pop rbp"));
        QCOMPARE(decoded.value()[4].address, uint64_t(0x1006));
        QVERIFY(!engine::decodeInstructions(EM_SPARC, false, code, 0).ok());
    }
};

QTEST_GUILESS_MAIN(TestDisassembly)
#include "tst_disassembly.moc"
