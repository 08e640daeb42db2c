#pragma once

#include "engine/model/units.h"

#include <QString>

#include <cstdint>
#include <string>

namespace emberline::ui {

// A value in its sample type's unit as the views print it ("1.25 s", "3.4 MiB", "12").
inline QString valueText(int64_t value, const std::string &unit)
{
    return QString::fromStdString(engine::formatValue(value, unit));
}

// The unit an axis of bytes is labelled in, for values up to `maxBytes`: B, KiB, MiB or GiB, and the divisor that
// turns bytes into it (as formatValue prints bytes).
struct ByteScale {
    double divisor = 1;
    QString unit = QStringLiteral("B");
};
inline ByteScale byteScale(double maxBytes)
{
    static constexpr const char *kUnits[] = {"KiB", "MiB", "GiB"};
    ByteScale scale;
    for (const char *unit : kUnits) {
        if (maxBytes < scale.divisor * 1024)
            break;
        scale.divisor *= 1024;
        scale.unit = QLatin1String(unit);
    }
    return scale;
}

} // namespace emberline::ui
