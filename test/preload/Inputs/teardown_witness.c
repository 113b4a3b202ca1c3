/* Stands in for libcuda.so.1: its destructor, where the real driver tears
 * its contexts down, says on stderr that it ran. */
#include <stdio.h>

__attribute__((destructor)) static void witness_teardown(void) {
  fprintf(stderr, "witness: driver destructor ran\n");
}
