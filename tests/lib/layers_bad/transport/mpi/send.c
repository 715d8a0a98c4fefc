#include "flush/flush.h" /* up: the transport calls the flush layer */
