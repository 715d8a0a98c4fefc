/* Configuration for building MPICH's test harness (test/mpi/util) without its
 * autotools configure step: a Linux/glibc host with POSIX threads, C only. */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STDARG_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_PTHREAD_H 1
#define HAVE_USLEEP 1
#define HAVE_STRDUP 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_MPI_WIN_CREATE 1

/* Values of THREAD_PACKAGE_NAME are defined in mpithreadtest.h: 2 is POSIX. */
#define THREAD_PACKAGE_NAME 2

#endif
