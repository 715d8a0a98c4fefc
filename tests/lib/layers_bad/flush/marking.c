#include "request/setup_waiters.h" /* a lifecycle internal */
