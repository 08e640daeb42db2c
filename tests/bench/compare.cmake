# Comparing two profiles against opening one, files to flame graph drawn, with the GUI thread's longest busy
# stretch: build/dev/tests/bench/bench_compare NEW BASE [--repeat N]; tests/bench/bench_compare.sh makes the files.
add_executable(bench_compare bench_compare.cpp)
target_link_libraries(bench_compare PRIVATE emberline_ui)
