#include "app/cli.h"
#include "app/record_command.h"

namespace emberline::app {

QList<Verb> verbs()
{
    return {reportVerb(), recordVerb()};
}

QString helpText(const QCommandLineParser &parser, const QStringList &usages)
{
    QString text = parser.helpText();
    const qsizetype firstLineEnd = text.indexOf(QLatin1Char('\n'));
    QString usage;
    for (const QString &u : usages)
        usage += (usage.isEmpty() ? QStringLiteral("Usage: emberline ") : QStringLiteral("       emberline ")) + u +
                 QLatin1Char('\n');
    text.replace(0, firstLineEnd + 1, usage);
    return text;
}

QString topLevelHelp(const QCommandLineParser &gui, const QStringList &guiUsages)
{
    QStringList usages = guiUsages;
    const QList<Verb> all = verbs();
    for (const Verb &verb : all)
        usages << verb.usage;
    QString text = helpText(gui, usages);
    text += QStringLiteral("\nCommands (`emberline COMMAND --help` prints one of these):\n");
    for (const Verb &verb : all) {
        QCommandLineParser parser;
        verb.configure(parser);
        text += QLatin1Char('\n') + helpText(parser, {verb.usage});
    }
    return text;
}

} // namespace emberline::app
