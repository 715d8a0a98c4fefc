#include "flush/flush.h" /* up */
