# Flame-graph repaint benchmark: renders FlameGraphView offscreen at several zoom levels and prints paint times.
add_executable(bench_flame_paint ${CMAKE_CURRENT_LIST_DIR}/bench_flame_paint.cpp)
target_link_libraries(bench_flame_paint PRIVATE emberline_ui)
target_compile_definitions(bench_flame_paint PRIVATE EMBERLINE_TEST_DATA="${CMAKE_SOURCE_DIR}/tests/data")
