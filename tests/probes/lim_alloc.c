/* lim_alloc MIB: allocates and touches MIB MiB in 1 MiB steps (0: without end), printing
 * "touched N" every 16 MiB and "done N" at the end. A memory bomb when MIB is 0: run it only
 * inside a jail whose memory limit holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const long want = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  long touched = 0;
  while (want == 0 || touched < want) {
    char* block = malloc(1 << 20);
    if (block == NULL) {
      printf("malloc failed after %ld\n", touched);
      return 1;
    }
    memset(block, 0x5a, 1 << 20);
    ++touched;
    if (touched % 16 == 0) {
      printf("touched %ld\n", touched);
      fflush(stdout);
    }
  }
  printf("done %ld\n", touched);
  return 0;
}
