// `emberline --help` against the verbs' own parsers: every option that `emberline report` and `emberline record`
// accept (as their own --help lists them, which Qt writes from the parser) appears in the top-level help with the
// same value name and description, and every option the top-level help lists is accepted where it is listed.
// If this fails, the top-level help has drifted from a parser: an option added, renamed or redescribed in one
// place only.

#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>

// Named rather than anonymous: the unity build includes this file, and a test class with members of an
// anonymous namespace's types would then warn (-Wsubobject-linkage).
namespace cli_help_test {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run run(const QStringList &args)
{
    QProcess p;
    p.start(kEmberline, args);
    Run r;
    if (!p.waitForFinished(30000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// One entry of a help text's "Options:" section: "-?, -h, --help" or "--frequency <HZ>", and its description.
struct HelpOption {
    QStringList names;   // with their dashes
    QString value;       // "HZ", or empty for a flag
    QString description; // whitespace simplified
    QString synopsis() const
    {
        return names.join(QStringLiteral(", ")) + (value.isEmpty() ? QString() : QStringLiteral(" <%1>").arg(value));
    }
};

// Qt's layout: "  NAMES  DESCRIPTION", the description continued on lines indented past the names. Parsing
// stops at the next section (a line that does not start with a space).
QList<HelpOption> optionsIn(const QString &help)
{
    static const QRegularExpression entryRe(
        QStringLiteral("^  ((?:--?[\\w?-]+)(?:, --?[\\w?-]+)*)(?: <([^>]+)>)?(?:\\s+(.*))?$"));
    QList<HelpOption> options;
    bool inOptions = false;
    for (const QString &line : help.split(QLatin1Char('\n'))) {
        if (!line.startsWith(QLatin1Char(' '))) {
            inOptions = line == QLatin1String("Options:");
            continue;
        }
        if (!inOptions)
            continue;
        if (const auto m = entryRe.match(line); m.hasMatch()) {
            options.append({m.captured(1).split(QStringLiteral(", ")), m.captured(2), m.captured(3)});
        } else if (!options.isEmpty()) {
            options.last().description += QLatin1Char(' ') + line.trimmed();
        }
    }
    for (HelpOption &o : options)
        o.description = o.description.simplified();
    return options;
}

// The part of the top-level help that describes `verb`: from its "Usage: emberline <verb>" line to the next
// "Usage:" line. The GUI's own part (verb empty) ends where the commands begin.
QString sectionOf(const QString &topLevel, const QString &verb)
{
    if (verb.isEmpty())
        return topLevel.left(topLevel.indexOf(QLatin1String("\nCommands")));
    const qsizetype start = topLevel.indexOf(QStringLiteral("\nUsage: emberline %1 ").arg(verb));
    if (start < 0)
        return {};
    const qsizetype end = topLevel.indexOf(QLatin1String("\nUsage: "), start + 1);
    return topLevel.mid(start + 1, end < 0 ? -1 : end - start - 1);
}

// The arguments that give `option` (its first long name) a plausible value.
QStringList argumentsFor(const HelpOption &option)
{
    QStringList args{option.names.last()};
    if (!option.value.isEmpty())
        args << QStringLiteral("1");
    return args;
}

} // namespace cli_help_test
using namespace cli_help_test;

class TestCliHelp : public QObject {
    Q_OBJECT

    QString m_topLevel; // what `emberline --help` prints

private Q_SLOTS:
    void initTestCase()
    {
        const Run r = run({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.startsWith(QLatin1String("Usage: emberline ")), qPrintable(r.out.left(200)));
        m_topLevel = r.out;
    }

    void verbs_data()
    {
        QTest::addColumn<QString>("verb");
        QTest::newRow("report") << QStringLiteral("report");
        QTest::newRow("record") << QStringLiteral("record");
    }

    // Every option of the verb's parser, with its value name and its description, is in the verb's part of
    // the top-level help; the top-level usage names the verb as its own help does.
    void verbs()
    {
        QFETCH(QString, verb);
        const Run own = run({verb, QStringLiteral("--help")});
        QCOMPARE(own.exitCode, 0);
        const QList<HelpOption> accepted = optionsIn(own.out);
        QVERIFY2(accepted.size() >= 3, qPrintable(own.out));
        const QString usage = own.out.section(QLatin1Char('\n'), 0, 0).mid(QStringLiteral("Usage: ").size());
        QVERIFY2(usage.startsWith(QStringLiteral("emberline %1 ").arg(verb)), qPrintable(usage));
        QVERIFY2(m_topLevel.section(QLatin1String("\n\n"), 0, 0).contains(usage), qPrintable(usage));

        const QString section = sectionOf(m_topLevel, verb);
        QVERIFY2(!section.isEmpty(), qPrintable(verb));
        const QList<HelpOption> listed = optionsIn(section);
        for (const HelpOption &o : accepted) {
            auto same = [&](const HelpOption &l) { return l.synopsis() == o.synopsis(); };
            const auto it = std::find_if(listed.begin(), listed.end(), same);
            QVERIFY2(it != listed.end(),
                     qPrintable(o.synopsis() + QStringLiteral(" is missing from emberline --help")));
            QVERIFY2(it->description == o.description,
                     qPrintable(o.synopsis() + QStringLiteral(": '%1' in emberline --help, '%2' in emberline %3 --help")
                                                   .arg(it->description, o.description, verb)));
        }
        QCOMPARE(listed.size(), accepted.size());
    }

    // Every option the top-level help lists is one its parser accepts: given with a value where it takes one,
    // before --help, it is parsed without error (an unknown option exits with status 2).
    void listedOptionsAreAccepted_data()
    {
        QTest::addColumn<QString>("verb");
        QTest::newRow("the window") << QString();
        QTest::newRow("report") << QStringLiteral("report");
        QTest::newRow("record") << QStringLiteral("record");
    }

    void listedOptionsAreAccepted()
    {
        QFETCH(QString, verb);
        const QList<HelpOption> listed = optionsIn(sectionOf(m_topLevel, verb));
        QVERIFY(!listed.isEmpty());
        for (const HelpOption &o : listed) {
            QStringList args = argumentsFor(o) << QStringLiteral("--help");
            if (!verb.isEmpty())
                args.prepend(verb);
            const Run r = run(args);
            QVERIFY2(r.exitCode == 0, qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
        }
    }

    // The options that the hand-written help once missed or described wrongly.
    void knownOptions()
    {
        const QString record = sectionOf(m_topLevel, QStringLiteral("record"));
        QVERIFY(record.contains(QLatin1String("--wall-time")));
        QVERIFY(record.contains(QLatin1String("--no-wall-time")));
        QVERIFY(record.contains(QLatin1String("ptrace")));
        const QString gui = sectionOf(m_topLevel, QString());
        QVERIFY(gui.contains(QLatin1String("--attach <PID>")));
        QVERIFY(gui.contains(QLatin1String("--record")));
    }
};

QTEST_GUILESS_MAIN(TestCliHelp)
#include "tst_cli_help.moc"
