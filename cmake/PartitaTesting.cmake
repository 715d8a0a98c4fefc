# Helpers every tests/ subfolder uses, so that each MPI test gets a launcher, a
# timeout (an MPI run can hang) and an environment that works with MPICH and Open MPI.
set(PARTITA_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=true" "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe"
  "OMPI_MCA_btl=self,vader,tcp" "OMP_WAIT_POLICY=passive")
set(PARTITA_EXPECT_ERROR ${CMAKE_SOURCE_DIR}/cmake/expect-error.sh)
# A test judged by its output must exit 0 too (cmake/exit-status.sh says why):
# partita_mpi_test's PASS_REGEX runs the command through it; a test set up
# with add_test calls partita_exit_status_test instead.
set(PARTITA_EXIT_STATUS ${CMAKE_SOURCE_DIR}/cmake/exit-status.sh)
set(PARTITA_EXIT_STATUS_FAIL "exit-status: the test exited with status")

# Open MPI 5's own partitioned communication (part/persist) hangs in MPI_Parrived
# polling when the receiver's partition count differs from the sender's, and now
# and then when threads poll MPI_Parrived (or mark) while other threads of the
# process still call MPI_Pready (docs/peer-tests.md, docs/patterns.md "Known
# issues"). The test folders leave those native runs out, or send them through
# libpartita, when this is set, and each says which at configure time.
set(PARTITA_NATIVE_PARRIVED_HANGS OFF)
if(PARTITA_MPI_FLAVOR STREQUAL "openmpi")
  set(PARTITA_NATIVE_PARRIVED_HANGS ON)
endif()

# partita_mpi_test(NAME n NP np [TIMEOUT s] COMMAND prog args... [ENV K=V...] [LABELS l...]
#                  [PASS_REGEX re] [EXPECT_ERROR re])
# EXPECT_ERROR: the run must exit non-zero, within the timeout, and print something matching re.
function(partita_mpi_test)
  cmake_parse_arguments(T "" "NAME;NP;TIMEOUT;PASS_REGEX;EXPECT_ERROR" "COMMAND;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(launch ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${MPIEXEC_PREFLAGS})
  if(T_EXPECT_ERROR)
    add_test(NAME ${T_NAME} COMMAND ${PARTITA_EXPECT_ERROR} ${T_TIMEOUT} "${T_EXPECT_ERROR}" ${launch} ${T_COMMAND})
  elseif(T_PASS_REGEX)
    partita_exit_status_test(NAME ${T_NAME} PASS_REGEX "${T_PASS_REGEX}" COMMAND ${launch} ${T_COMMAND})
  else()
    add_test(NAME ${T_NAME} COMMAND ${launch} ${T_COMMAND})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${PARTITA_TEST_ENV};${T_ENV}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

# partita_mpi_error_cases(PREFIX p NP np [TIMEOUT s] COMMAND prog... CASES "name|arguments|regex"...):
# one EXPECT_ERROR test per case, named p.name: the program run with the arguments must exit
# non-zero within the timeout and print something matching regex, never hang. A case
# "name|args0|args1|regex" gives the ranks different arguments: rank 0 runs the program with
# args0 appended, the others with args1 (tests/env_per_rank.sh; either may be empty).
find_program(BASH_PROGRAM bash)
function(partita_mpi_error_cases)
  cmake_parse_arguments(E "" "PREFIX;NP;TIMEOUT" "COMMAND;CASES" ${ARGN})
  if(NOT E_TIMEOUT)
    set(E_TIMEOUT 60)
  endif()
  foreach(case ${E_CASES})
    string(REPLACE "|" ";" parts "${case}")
    list(LENGTH parts nparts)
    list(GET parts 0 name)
    list(GET parts -1 regex)
    list(GET parts 1 argstr)
    if(nparts EQUAL 3)
      separate_arguments(args UNIX_COMMAND "${argstr}")
      set(command ${E_COMMAND} ${args})
    elseif(BASH_PROGRAM)
      list(GET parts 2 other)
      # a leading space keeps an empty value (CMake drops empty arguments); the shell's word splitting drops it
      set(command ${BASH_PROGRAM} ${PROJECT_SOURCE_DIR}/tests/env_per_rank.sh EXTRA_ARGS " ${argstr}" " ${other}"
        ${BASH_PROGRAM} -c "exec \"$0\" \"$@\" $EXTRA_ARGS" ${E_COMMAND})
    else()
      continue()
    endif()
    partita_mpi_test(NAME ${E_PREFIX}.${name} NP ${E_NP} TIMEOUT ${E_TIMEOUT} COMMAND ${command}
      EXPECT_ERROR "${regex}")
  endforeach()
endfunction()

# partita_mpi_memory_limit_test(NAME n LIMIT_KB kb [RANK r] COMMAND prog... EXPECT_ERROR regex
# [LABELS l...]): a 2-rank run in which rank r (1 unless given) alone has its address space
# limited (ulimit -v kb), so that an allocation fails on that rank only: the program must end
# every rank with the message, never leave the other rank waiting for a peer that has gone.
# MPI_Init takes about 52 MB of address space here under MPICH (the limits are set for it)
# and 72 MB under Open MPI 5, whose ranks, with less, fail to map their shared memory and
# then wait for each other in their first collective for ever: under Open MPI every limit is
# 20 MB higher. glibc reserves 64 MB more for the malloc
# arena of each further thread that allocates, which near such a limit would fail at a point
# of its own: MALLOC_ARENA_MAX=1 keeps every allocation in the main arena. Not under the
# sanitizers, whose shadow memory needs more address space than any such limit leaves.
function(partita_mpi_memory_limit_test)
  cmake_parse_arguments(M "" "NAME;LIMIT_KB;EXPECT_ERROR;RANK" "COMMAND;LABELS" ${ARGN})
  if(PARTITA_SANITIZE OR NOT BASH_PROGRAM)
    return()
  endif()
  if(PARTITA_MPI_FLAVOR STREQUAL "openmpi")
    math(EXPR M_LIMIT_KB "${M_LIMIT_KB} + 20000")
  endif()
  if("${M_RANK}" STREQUAL "0")
    set(limits ${M_LIMIT_KB} unlimited)
  else()
    set(limits unlimited ${M_LIMIT_KB})
  endif()
  partita_mpi_test(NAME ${M_NAME} NP 2 TIMEOUT 60 EXPECT_ERROR "${M_EXPECT_ERROR}" ENV MALLOC_ARENA_MAX=1
    LABELS ${M_LABELS}
    COMMAND ${BASH_PROGRAM} ${PROJECT_SOURCE_DIR}/tests/env_per_rank.sh PT_ADDRESS_LIMIT_KB ${limits}
    ${BASH_PROGRAM} -c "ulimit -v \"$PT_ADDRESS_LIMIT_KB\" && exec \"$0\" \"$@\"" ${M_COMMAND})
endfunction()

# partita_exit_status_test(NAME n PASS_REGEX re COMMAND prog args...): a test
# judged by its output and its exit status both (partita_mpi_test's
# PASS_REGEX, and tests that are not MPI launches). The caller sets its other
# properties.
function(partita_exit_status_test)
  cmake_parse_arguments(X "" "NAME;PASS_REGEX" "COMMAND" ${ARGN})
  add_test(NAME ${X_NAME} COMMAND ${PARTITA_EXIT_STATUS} ${X_COMMAND})
  set_tests_properties(${X_NAME} PROPERTIES PASS_REGULAR_EXPRESSION "${X_PASS_REGEX}"
    FAIL_REGULAR_EXPRESSION "${PARTITA_EXIT_STATUS_FAIL}")
endfunction()
