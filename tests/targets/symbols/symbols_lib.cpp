#include "tests/targets/symbols/symbols_lib.h"

#include "tests/targets/symbols/marker.h"

namespace symlib {

__attribute__((noinline, noclone)) long Counter::increment(long by)
{
    EMBERLINE_MARK(emberline_mark_library);
    m_value += by;
    return m_value;
}

namespace {
__attribute__((noinline, noclone)) int localHelper(int x)
{
    EMBERLINE_MARK(emberline_mark_library_local);
    return x * 7 - 3;
}
} // namespace

int hiddenWork(int x)
{
    return localHelper(x) + 1;
}

} // namespace symlib
