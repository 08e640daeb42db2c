#pragma once

// A shared library for the symbolizer tests: a namespaced class with an exported method and a file-local
// function that only the full symbol table (or DWARF) names.
namespace symlib {

class Counter {
public:
    long increment(long by);
    long value() const { return m_value; }

private:
    long m_value = 0;
};

int hiddenWork(int x);

} // namespace symlib
