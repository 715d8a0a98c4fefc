# Helpers every tests/ subfolder uses, so that each MPI test gets a launcher, a
# timeout (an MPI run can hang) and an environment that works with MPICH and Open MPI.
set(PARTITA_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_rmaps_base_oversubscribe=true" "PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe"
  "OMPI_MCA_btl=self,vader,tcp" "OMP_WAIT_POLICY=passive")
set(PARTITA_EXPECT_ERROR ${CMAKE_SOURCE_DIR}/cmake/expect-error.sh)

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
  else()
    add_test(NAME ${T_NAME} COMMAND ${launch} ${T_COMMAND})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${PARTITA_TEST_ENV};${T_ENV}")
  if(T_PASS_REGEX)
    set_tests_properties(${T_NAME} PROPERTIES PASS_REGULAR_EXPRESSION "${T_PASS_REGEX}")
  endif()
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
