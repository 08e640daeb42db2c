# bench_upload: target slowdown and sampling rate with upload on vs off, and flush-to-sent latency against a
# loopback receiver. Included by tests/bench/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/upload.cmake OPTIONAL)
add_executable(bench_upload ${CMAKE_CURRENT_LIST_DIR}/bench_upload.cpp)
target_link_libraries(bench_upload PRIVATE emberline_engine)
target_compile_definitions(bench_upload PRIVATE EMBERLINE_BINARY_DIR="${CMAKE_BINARY_DIR}")
add_dependencies(bench_upload emberline_targets)
