# The shared Matrix Market reader (matrix_market.c: cnc-solve, the tests, the benchmarks) as one
# static library, cnc_matrix_market, defined by whichever of those folders comes first. gzip
# files are read through zlib (Debian: zlib1g-dev).
include_guard(GLOBAL)
find_package(ZLIB REQUIRED)
add_library(cnc_matrix_market STATIC ${CMAKE_CURRENT_LIST_DIR}/matrix_market.c)
target_include_directories(cnc_matrix_market PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(cnc_matrix_market PRIVATE ${CNC_WARNINGS})
target_link_libraries(cnc_matrix_market PUBLIC ZLIB::ZLIB m)
