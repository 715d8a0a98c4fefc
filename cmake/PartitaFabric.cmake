# The optional libfabric transport: built when pkg-config finds libfabric
# (scripts/bootstrap.sh installs libfabric-dev when it can). Only the headers
# are used at build time: the library is loaded at run time by full path into
# a namespace of its own (src/lib/transport/fabric/fabric_api.h says why).
#
# Which library file: PARTITA_LIBFABRIC_PATH, by default `newer`: the newer of
# the system's (the one the headers belong to) and the MPI library's own (the
# MPICH wheel carries libfabric 2.5, whose shm provider writes small messages
# at about half the cost of Debian's 1.17: docs/library.md, "Which
# libfabric"); `system` or `mpi` for one of them, or a path. Whichever file is
# loaded, the six functions libpartita looks up are taken at the symbol
# versions the headers' library makes default: a newer library keeps those
# for programs built against older headers, with those headers' structure
# layouts.
option(PARTITA_FABRIC "Build the libfabric transport when libfabric is found" ON)
set(PARTITA_LIBFABRIC_PATH "newer" CACHE STRING
  "libfabric file the fabric transport loads: newer (of the next two), system, mpi (the MPI library's own) or a path")
set(PARTITA_HAVE_FABRIC 0)
set(PARTITA_LIBFABRIC_FILE "")    # the file the fabric transport loads (partita-build.json)
set(PARTITA_LIBFABRIC_VERSION "")
set(PARTITA_FI_SYMBOLS fi_getinfo fi_freeinfo fi_dupinfo fi_fabric fi_strerror fi_version)

# Configure asks the same questions of the same files more than once (which
# file to load, which other one the tests load, the version for
# partita-build.json): each answer is worked out once and kept in a global
# property, as bootstrap.sh re-runs configure before every build.
function(partita_fi_recall key out known)
  get_property(_known GLOBAL PROPERTY "partita ${key}" SET)
  get_property(_value GLOBAL PROPERTY "partita ${key}")
  set(${out} "${_value}" PARENT_SCOPE)
  set(${known} ${_known} PARENT_SCOPE)
endfunction()

# The dynamic symbol table of library `so` (readelf), empty without readelf.
function(partita_fi_symbols so out)
  partita_fi_recall("symbols ${so}" _syms _known)
  if(NOT _known)
    find_program(PARTITA_READELF readelf)
    set(_syms "")
    if(PARTITA_READELF)
      execute_process(COMMAND ${PARTITA_READELF} -W --dyn-syms "${so}" OUTPUT_VARIABLE _syms ERROR_QUIET)
    endif()
    set_property(GLOBAL PROPERTY "partita symbols ${so}" "${_syms}")
  endif()
  set(${out} "${_syms}" PARENT_SCOPE)
endfunction()

# The default symbol version of each of PARTITA_FI_SYMBOLS in library `so`
# (fi_getinfo -> FABRIC_1.3), as PARTITA_FI_VER_<symbol>; empty when the
# library has no symbol versions or readelf is missing.
function(partita_fi_default_versions so)
  partita_fi_symbols("${so}" _out)
  foreach(_sym ${PARTITA_FI_SYMBOLS})
    set(_ver "")
    if(_out MATCHES " ${_sym}@@(FABRIC_[0-9.]+)")
      set(_ver "${CMAKE_MATCH_1}")
    endif()
    set(PARTITA_FI_VER_${_sym} "${_ver}" PARENT_SCOPE)
  endforeach()
endfunction()

# Whether library `so` exports every symbol at the versions found above.
function(partita_fi_has_versions so out)
  set(_ok 1)
  partita_fi_symbols("${so}" _syms)
  foreach(_sym ${PARTITA_FI_SYMBOLS})
    if(NOT PARTITA_FI_VER_${_sym} OR NOT _syms MATCHES " ${_sym}@@?${PARTITA_FI_VER_${_sym}}[ \n]")
      set(_ok 0)
    endif()
  endforeach()
  set(${out} ${_ok} PARENT_SCOPE)
endfunction()

# The libfabric version of library `so` ("2.5"), loaded as libpartita loads it; empty if it cannot be.
function(partita_fi_version so out)
  partita_fi_recall("version ${so}" _v _known)
  if(NOT _known)
    try_run(_run _compiled ${CMAKE_BINARY_DIR}/fabric-version-probe ${PROJECT_SOURCE_DIR}/cmake/fabric_version.c
      LINK_LIBRARIES ${CMAKE_DL_LIBS} RUN_OUTPUT_VARIABLE _v ARGS "${so}")
    if(NOT _compiled OR NOT _run EQUAL 0)
      set(_v "")
    endif()
    set_property(GLOBAL PROPERTY "partita version ${so}" "${_v}")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

# The libfabric.so.N the MPI library itself loads (ldd of libmpi.so.N: the
# libmpi.so a wheel links may be a linker script), if any.
function(partita_mpi_libfabric out)
  partita_fi_recall("mpi libfabric" _found _known)
  if(NOT _known)
    set(_found "")
    find_program(PARTITA_LDD ldd)
    foreach(_lib ${MPI_C_LIBRARIES})
      get_filename_component(_dir "${_lib}" DIRECTORY)
      file(GLOB _sonames "${_dir}/libmpi.so.[0-9]*")
      foreach(_so ${_sonames})
        if(PARTITA_LDD AND NOT _found)
          execute_process(COMMAND ${PARTITA_LDD} "${_so}" OUTPUT_VARIABLE _deps ERROR_QUIET)
          if(_deps MATCHES "libfabric\\.so\\.[0-9]+ => ([^ \n]+)")
            get_filename_component(_found "${CMAKE_MATCH_1}" REALPATH)
          endif()
        endif()
      endforeach()
    endforeach()
    set_property(GLOBAL PROPERTY "partita mpi libfabric" "${_found}")
  endif()
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# The file PARTITA_LIBFABRIC_PATH names, given the system's; `why` says why, in words.
function(partita_choose_libfabric system_so out why)
  set(_choice "${PARTITA_LIBFABRIC_PATH}")
  if(NOT _choice MATCHES "^(system|mpi|newer)$")
    if(NOT EXISTS "${_choice}")
      message(FATAL_ERROR "partita: PARTITA_LIBFABRIC_PATH='${_choice}' is not system, mpi, newer or an existing file")
    endif()
    set(${out} "${_choice}" PARENT_SCOPE)
    set(${why} " (PARTITA_LIBFABRIC_PATH)" PARENT_SCOPE)
    return()
  endif()
  set(${out} "${system_so}" PARENT_SCOPE)
  partita_fi_version("${system_so}" _system_version)
  set(${why} ", the system's: libfabric ${_system_version}" PARENT_SCOPE)
  if(_choice STREQUAL "system")
    return()
  endif()
  partita_mpi_libfabric(_mpi_so)
  set(_mpi_version "")
  set(_usable 0)
  if(_mpi_so)
    partita_fi_version("${_mpi_so}" _mpi_version)
    partita_fi_has_versions("${_mpi_so}" _usable)
  endif()
  if(NOT _mpi_version OR NOT _usable)
    set(_what "the MPI library loads no libfabric")
    if(_mpi_so)
      set(_what "${_mpi_so} cannot be loaded or lacks the symbol versions of the system's")
    endif()
    if(_choice STREQUAL "mpi")
      message(FATAL_ERROR "partita: PARTITA_LIBFABRIC_PATH=mpi: ${_what}")
    endif()
    set(${why} ", the system's: libfabric ${_system_version} (${_what})" PARENT_SCOPE)
    return()
  endif()
  if(_choice STREQUAL "mpi" OR _mpi_version VERSION_GREATER _system_version)
    set(${out} "${_mpi_so}" PARENT_SCOPE)
    set(${why} ", the MPI library's own: libfabric ${_mpi_version} (the system's: ${_system_version})" PARENT_SCOPE)
  else()
    set(${why} ", the system's: libfabric ${_system_version} (the MPI library's own: ${_mpi_version})" PARENT_SCOPE)
  endif()
endfunction()

if(PARTITA_FABRIC)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(FABRIC QUIET libfabric)
  endif()
  if(FABRIC_FOUND)
    # the run-time file: libfabric.so.<soversion> next to the development link
    pkg_get_variable(FABRIC_LIBDIR libfabric libdir)
    file(GLOB _fabric_so "${FABRIC_LIBDIR}/libfabric.so.[0-9]")
    list(LENGTH _fabric_so _n)
    if(_n EQUAL 1)
      set(PARTITA_HAVE_FABRIC 1)
      partita_fi_default_versions("${_fabric_so}")
      set(_why "")
      partita_choose_libfabric("${_fabric_so}" PARTITA_LIBFABRIC_FILE _why)
      partita_fi_version("${PARTITA_LIBFABRIC_FILE}" PARTITA_LIBFABRIC_VERSION) # for partita-build.json
      # the other usable libfabric here, if any (the tests load it instead too)
      partita_mpi_libfabric(_mpi_so)
      get_filename_component(_chosen_real "${PARTITA_LIBFABRIC_FILE}" REALPATH)
      set(PARTITA_LIBFABRIC_OTHER "")
      foreach(_cand ${_fabric_so} ${_mpi_so})
        get_filename_component(_real "${_cand}" REALPATH)
        partita_fi_has_versions("${_cand}" _usable)
        if(_usable AND NOT _real STREQUAL _chosen_real AND NOT PARTITA_LIBFABRIC_OTHER)
          set(PARTITA_LIBFABRIC_OTHER "${_real}")
          partita_fi_version("${_cand}" PARTITA_LIBFABRIC_OTHER_VERSION)
        endif()
      endforeach()
    else()
      message(STATUS "partita: libfabric ${FABRIC_VERSION} found but no single libfabric.so.N in ${FABRIC_LIBDIR}: fabric transport left out")
    endif()
  endif()
endif()
if(PARTITA_HAVE_FABRIC)
  set(PARTITA_HAVE_FABRIC_JSON true)
else()
  set(PARTITA_HAVE_FABRIC_JSON false)
endif()
if(PARTITA_HAVE_FABRIC)
  message(STATUS "partita: fabric transport built (libfabric ${FABRIC_VERSION} headers; loads ${PARTITA_LIBFABRIC_FILE}${_why})")
else()
  message(STATUS "partita: fabric transport left out (no libfabric; install libfabric-dev and re-run make bootstrap)")
endif()
