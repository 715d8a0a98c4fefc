# The communication-pattern benchmarks (docs/patterns.md): Sweep3D, Halo3D and a
# 27-point stencil exchange, sharing a small decomposition/exchange library.
add_library(partita-patterns STATIC
  patterns/counted.c patterns/driver.c patterns/exchange.c patterns/field.c patterns/ghost.c patterns/grid.c)
target_include_directories(partita-patterns PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(partita-patterns PUBLIC partita-harness)

partita_benchmark(partita-halo3d patterns/halo3d.c)
target_link_libraries(partita-halo3d PRIVATE partita-patterns)

partita_benchmark(partita-stencil patterns/stencil.c)
target_link_libraries(partita-stencil PRIVATE partita-patterns)

partita_benchmark(partita-sweep3d patterns/sweep3d.c)
target_link_libraries(partita-sweep3d PRIVATE partita-patterns)
