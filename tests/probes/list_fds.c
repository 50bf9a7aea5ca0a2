/* Prints the numbers of the open file descriptors of this process, in ascending order, one
 * line, space separated; the descriptor used to read /proc/self/fd is left out. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

static int compare(const void* a, const void* b) {
  return *(const int*)a - *(const int*)b;
}

int main(void) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == NULL) {
    perror("list_fds: opendir /proc/self/fd");
    return 2;
  }
  int fds[1024];
  int count = 0;
  const struct dirent* entry;
  while ((entry = readdir(dir)) != NULL && count < 1024) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    int fd = atoi(entry->d_name);
    if (fd != dirfd(dir)) fds[count++] = fd;
  }
  closedir(dir);
  qsort(fds, (size_t)count, sizeof fds[0], compare);
  for (int i = 0; i < count; ++i) printf(i == 0 ? "%d" : " %d", fds[i]);
  printf("\n");
  return 0;
}
