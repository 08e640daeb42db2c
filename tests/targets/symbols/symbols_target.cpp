// A program that exists to be symbolized (tests/engine/symbols): a class method in a namespace, a function
// template, and a chain of always-inline functions inside a noinline caller, built -O2 -g as a PIE and as a
// non-PIE executable. Every interesting address carries a marker label (marker.h); comments "LINE:" and
// "CALL:" name the source lines the tests expect.
#include "tests/targets/symbols/marker.h"
#include "tests/targets/symbols/symbols_inline.h"
#include "tests/targets/symbols/symbols_lib.h"

#include <cstdio>
#include <cstdlib>

namespace symbols {

class Shape {
public:
    explicit Shape(int side) : m_side(side) {}
    __attribute__((noinline, noclone)) int area(int scale) const;

private:
    int m_side;
};

int Shape::area(int scale) const
{
    EMBERLINE_MARK(emberline_mark_method); // LINE: method
    return m_side * m_side * scale;
}

template <typename T> __attribute__((noinline, noclone)) T sumTwice(T a, T b)
{
    EMBERLINE_MARK(emberline_mark_template); // LINE: template
    return (a + b) * 2;
}

__attribute__((always_inline)) inline int inlinedMiddle(int x)
{
    return inlinedLeaf(x + 2) * 5; // CALL: inlinedLeaf
}

__attribute__((noinline, noclone)) int inlineCaller(int x)
{
    return inlinedMiddle(x) + 7; // CALL: inlinedMiddle
}

} // namespace symbols

int main(int argc, char **argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 3;
    symbols::Shape shape(n);
    symlib::Counter counter;
    counter.increment(shape.area(2));
    const long sum = symbols::sumTwice<long>(n, counter.value());
    const int inlined = symbols::inlineCaller(n);
    std::printf("%ld %d %d\n", sum, inlined, symlib::hiddenWork(n));
    (void)argv;
    return 0;
}
