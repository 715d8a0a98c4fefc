/* Configuration for building MPICH's DTPools datatype library without its
 * configure step: it needs nothing beyond the C standard library and MPI. */
#ifndef DTPOOLSCONF_H_INCLUDED
#define DTPOOLSCONF_H_INCLUDED
#endif
