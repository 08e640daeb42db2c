// Source lookup (engine/annotate/source_locator.h): the recorded path first, then each source root with the
// recorded path's suffixes from the longest, and the errors for a missing or binary file.
#include "engine/annotate/source_locator.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::engine;

namespace {

void write(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

} // namespace

class TestSourceLocator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, a source at its recorded path is not read line by line (line N is lines[N-1]).
    void recordedPathFirst()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("a.c"));
        write(file, "int a;\r\nint b;\nint c;");
        const SourceLocator locator({dir.filePath(QStringLiteral("elsewhere")).toStdString()});
        auto src = locator.load(file.toStdString());
        QVERIFY(src);
        QCOMPARE(src->path, file.toStdString());
        QCOMPARE(src->lines.size(), size_t(3));
        QCOMPARE(src->lines[1], std::string("int b;"));
        QCOMPARE(src->lines[2], std::string("int c;"));
    }

    // If this fails, a program built elsewhere no longer finds its sources under a root by the longest suffix.
    void rootsBySuffix()
    {
        QTemporaryDir dir;
        write(dir.filePath(QStringLiteral("one/app/main.cpp")), "one\n");
        write(dir.filePath(QStringLiteral("two/src/app/main.cpp")), "two\n");
        write(dir.filePath(QStringLiteral("two/main.cpp")), "short suffix\n");
        const SourceLocator locator(
            {dir.filePath(QStringLiteral("two")).toStdString(), dir.filePath(QStringLiteral("one")).toStdString()});
        const auto found = locator.find("/build/src/app/main.cpp");
        QVERIFY(found);
        QCOMPARE(QString::fromStdString(*found), dir.filePath(QStringLiteral("two/src/app/main.cpp")));
        // Roots are tried in order: the first root's shortest suffix beats the second root's longer one.
        const SourceLocator reversed(
            {dir.filePath(QStringLiteral("one")).toStdString(), dir.filePath(QStringLiteral("two")).toStdString()});
        QCOMPARE(QString::fromStdString(*reversed.find("/build/src/app/main.cpp")),
                 dir.filePath(QStringLiteral("one/app/main.cpp")));
    }

    // If this fails, a missing or binary source is no longer an error that says so.
    void errors()
    {
        QTemporaryDir dir;
        const SourceLocator locator({dir.path().toStdString()});
        auto missing = locator.load("/nowhere/x.c");
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.find("not found at /nowhere/x.c nor under 1 source root") != std::string::npos,
                 missing.error().message.c_str());
        QVERIFY(!locator.load(""));
        write(dir.filePath(QStringLiteral("bin.c")), QByteArray("ab\0cd", 5));
        auto binary = locator.load(dir.filePath(QStringLiteral("bin.c")).toStdString());
        QVERIFY(!binary);
        QVERIFY(binary.error().message.find("not a text file") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSourceLocator)
#include "tst_source_locator.moc"
