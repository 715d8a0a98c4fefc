# partita-adapt-bench: libpartita's layouts, the adaptive policy, native MPI
# and a single message side by side in one launch (adapt_bench.c). It calls
# libpartita's Partita_* entry points and the MPI library's own partitioned
# calls in one process, so it links libpartita (not the interposer).
if(TARGET partita)
  add_executable(partita-adapt-bench adapt_bench.c adapt_bench_output.c)
  target_link_libraries(partita-adapt-bench PRIVATE partita partita-harness MPI::MPI_C)
  set_target_properties(partita-adapt-bench PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
endif()
