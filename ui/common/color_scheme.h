#pragma once

#include <QPalette>

namespace emberline::ui {

// Emberline's dark palette (EMBERLINE_COLOR_SCHEME=dark, for desktops whose theme does not pass a dark scheme to
// Qt): grey surfaces, light text, a blue highlight, dimmed disabled text.
QPalette darkPalette();

} // namespace emberline::ui
