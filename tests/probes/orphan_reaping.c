/* Leaves orphans for PID 1 to reap: forks children that each fork a grandchild and exit at once;
 * the grandchildren exit shortly after, re-parented to the jail's PID 1. Then watches /proc for
 * zombies for up to 3 s and prints "zombies N" with the last count seen (0 once all are reaped).
 * Exits 0 when no zombie is left, 1 otherwise. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kChildren = 8 };

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Number of processes in state Z; their pids go to stdout when `show` is set. */
static int count_zombies(int show) {
  DIR* proc = opendir("/proc");
  if (proc == NULL) {
    perror("orphan_reaping: opendir /proc");
    exit(2);
  }
  int zombies = 0;
  const struct dirent* entry;
  while ((entry = readdir(proc)) != NULL) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
    FILE* f = fopen(path, "re");
    if (f == NULL) continue;
    char stat[1024] = {0};
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char* close_paren = strrchr(stat, ')');
    if (close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 'Z') {
      ++zombies;
      if (show) printf("zombie: %s", stat);
    }
  }
  closedir(proc);
  return zombies;
}

int main(void) {
  for (int i = 0; i < kChildren; ++i) {
    pid_t child = fork();
    if (child < 0) {
      perror("orphan_reaping: fork");
      return 2;
    }
    if (child == 0) {
      pid_t grandchild = fork();
      if (grandchild == 0) {
        sleep_ms(100);
        _exit(0);
      }
      _exit(grandchild < 0 ? 3 : 0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "orphan_reaping: child %d failed\n", (int)child);
      return 2;
    }
  }
  sleep_ms(400); /* every grandchild has exited by now */
  int zombies = count_zombies(0);
  for (int waited = 0; zombies > 0 && waited < 3000; waited += 100) {
    sleep_ms(100);
    zombies = count_zombies(0);
  }
  if (zombies > 0) count_zombies(1);
  printf("zombies %d\n", zombies);
  return zombies == 0 ? 0 : 1;
}
