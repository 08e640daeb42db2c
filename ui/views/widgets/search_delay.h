#pragma once

namespace emberline::ui {

// How long a search field waits after the last keystroke before it searches: long enough that typing a name does
// not search every prefix of it, short enough to feel immediate.
inline constexpr int kSearchDelayMs = 120;

} // namespace emberline::ui
