# The live GUI under load: many_stacks at 999 Hz in the real live view; per-flush view update latency, GUI
# event-loop latency and memory. Run: build/dev/tests/bench/bench_live_gui [SECONDS] [FLUSH_PERIOD]
add_executable(bench_live_gui bench_live_gui.cpp)
target_link_libraries(bench_live_gui PRIVATE emberline_ui)
target_compile_definitions(bench_live_gui PRIVATE EMBERLINE_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(bench_live_gui many_stacks)
