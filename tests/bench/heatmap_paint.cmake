# Heatmap repaint benchmark: a 30-minute session at 999 Hz rendered offscreen; prints paint times.
add_executable(bench_heatmap_paint ${CMAKE_CURRENT_LIST_DIR}/bench_heatmap_paint.cpp)
target_link_libraries(bench_heatmap_paint PRIVATE emberline_ui)
