#pragma once

#include <QIcon>

namespace emberline::ui {

// The application icon (resources/icons/emberline.svg, compiled in when it existed at configure time); a null
// icon otherwise.
QIcon applicationIcon();

} // namespace emberline::ui
