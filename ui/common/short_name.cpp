#include "ui/common/short_name.h"

#include "engine/model/python_frame.h"

namespace emberline::ui {
namespace {

bool isIdentifierChar(QChar c)
{
    return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('$');
}

// The index just past the bracket closing the one at `open` (nesting of the same pair counted); name.size() when
// it is never closed.
qsizetype pastClosing(QStringView name, qsizetype open, QChar opening, QChar closing)
{
    int depth = 0;
    for (qsizetype i = open; i < name.size(); ++i) {
        if (name[i] == opening)
            ++depth;
        else if (name[i] == closing && --depth == 0)
            return i + 1;
    }
    return name.size();
}

// The operator's symbol after "operator" at `i` ("<<", "()", "[]", "->*"), copied as it is: its brackets are not a
// template's or a parameter list's.
qsizetype operatorSymbolEnd(QStringView name, qsizetype i)
{
    if (name.mid(i).startsWith(QLatin1String("()")) || name.mid(i).startsWith(QLatin1String("[]")))
        return i + 2;
    static const QString kSymbols = QStringLiteral("+-*/%^&|~!=<>,");
    while (i < name.size() && kSymbols.contains(name[i]))
        ++i;
    return i;
}

// Drops a return type ("void foo<…>", "std::string bar"): what comes before the last space outside brackets,
// unless that space belongs to "operator new" or a conversion operator.
QString withoutReturnType(const QString &name)
{
    int depth = 0;
    qsizetype lastSpace = -1;
    for (qsizetype i = 0; i < name.size(); ++i) {
        const QChar c = name[i];
        if (c == QLatin1Char('(') || c == QLatin1Char('{') || c == QLatin1Char('['))
            ++depth;
        else if ((c == QLatin1Char(')') || c == QLatin1Char('}') || c == QLatin1Char(']')) && depth > 0)
            --depth;
        // Not the space of "operator new", nor the one before a template operator's arguments ("operator< <…>").
        else if (c == QLatin1Char(' ') && depth == 0 && i + 1 < name.size() && name[i + 1] != QLatin1Char('<') &&
                 !QStringView(name).left(i).endsWith(QLatin1String("operator")))
            lastSpace = i;
    }
    return lastSpace < 0 ? name : name.mid(lastSpace + 1);
}

} // namespace

QString shortFunctionName(QStringView name)
{
    // Only a demangled C++ name has a parameter list right after an identifier or a template, or template
    // arguments; everything else is drawn as it came.
    bool hasParameters = false;
    for (qsizetype paren = name.indexOf(QLatin1Char('(')); paren >= 0 && !hasParameters;
         paren = name.indexOf(QLatin1Char('('), paren + 1))
        hasParameters = paren > 0 && (isIdentifierChar(name[paren - 1]) || name[paren - 1] == QLatin1Char('>'));
    if (!hasParameters && !name.contains(QLatin1Char('<')))
        return name.toString();
    QString out;
    out.reserve(name.size());
    qsizetype afterParameters = -1; // where the output stood after the last dropped parameter list
    qsizetype i = 0;
    while (i < name.size()) {
        const QChar c = name[i];
        if (c == QLatin1Char('o') && name.mid(i).startsWith(QLatin1String("operator")) &&
            (i == 0 || !isIdentifierChar(name[i - 1])) && (i + 8 >= name.size() || !isIdentifierChar(name[i + 8]))) {
            const qsizetype end = operatorSymbolEnd(name, i + 8);
            out += name.mid(i, end - i);
            i = end;
            // Right after the symbol comes the parameter list ("operator<<(int)"), or a template's arguments.
            if (i < name.size() && name[i] == QLatin1Char('(')) {
                i = pastClosing(name, i, QLatin1Char('('), QLatin1Char(')'));
                afterParameters = out.size();
            }
        } else if (c == QLatin1Char('<')) {
            out += QStringLiteral("<…>");
            i = pastClosing(name, i, QLatin1Char('<'), QLatin1Char('>'));
        } else if (c == QLatin1Char('{')) { // a lambda or unnamed type: {lambda(int)#1}
            const qsizetype end = pastClosing(name, i, QLatin1Char('{'), QLatin1Char('}'));
            out += name.mid(i, end - i);
            i = end;
        } else if (c == QLatin1Char('(') && i > 0 &&
                   (isIdentifierChar(name[i - 1]) || name[i - 1] == QLatin1Char('>') ||
                    name[i - 1] == QLatin1Char(')') || name[i - 1] == QLatin1Char(']'))) {
            i = pastClosing(name, i, QLatin1Char('('), QLatin1Char(')'));
            afterParameters = out.size();
        } else if (c == QLatin1Char('(')) { // "(anonymous namespace)" and other parenthesised parts
            const qsizetype end = pastClosing(name, i, QLatin1Char('('), QLatin1Char(')'));
            out += name.mid(i, end - i);
            i = end;
        } else {
            out += c;
            ++i;
        }
    }
    // " const", " &&", " [clone .cold]" after the last parameter list go; a nested name ("f(int)::x") stays.
    if (afterParameters >= 0 && !QStringView(out).mid(afterParameters).startsWith(QLatin1String("::")))
        out.truncate(afterParameters);
    out = withoutReturnType(out.trimmed());
    return out.isEmpty() ? name.toString() : out;
}

QString shortFrameName(const engine::Frame &frame, QStringView name)
{
    return engine::isPythonFrame(frame) ? name.toString() : shortFunctionName(name);
}

} // namespace emberline::ui
