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

} // namespace emberline::ui
