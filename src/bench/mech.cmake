# partita-mech: the send-mechanisms benchmark (docs/mech.md). The loop schemes
# are a library of their own so tests can check them without MPI.
add_library(partita-mech-schedule STATIC mech_schedule.c)
target_link_libraries(partita-mech-schedule PUBLIC partita-harness)
partita_benchmark(partita-mech mech.c mech_cli.c mech_output.c mech_transfer.c)
target_link_libraries(partita-mech PRIVATE partita-mech-schedule)
