// The one source file of a precompiled-header target: the header is compiled once for it, then reused by
// every test with the same compile flags (see tests/CMakeLists.txt).
