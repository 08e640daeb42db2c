# bench_symbolize: symbolizer cost per address, cold and warm. Included by tests/bench/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/symbolize.cmake)
pkg_check_modules(EMBERLINE_BENCH_LIBELF REQUIRED IMPORTED_TARGET libelf)
add_executable(bench_symbolize ${CMAKE_CURRENT_LIST_DIR}/bench_symbolize.cpp)
target_link_libraries(bench_symbolize PRIVATE emberline_engine PkgConfig::EMBERLINE_BENCH_LIBELF)
