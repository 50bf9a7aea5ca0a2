/* try_write [--mkdir] PATH...: tries to create each PATH (a file, or a directory with --mkdir)
 * and prints one line per PATH: "PATH ok" or "PATH <ERRNO NAME>". Exits 0 once all were tried. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char* errno_name(int e) {
  switch (e) {
    case EROFS:
      return "EROFS";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case EEXIST:
      return "EEXIST";
    case ENOSPC:
      return "ENOSPC";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    default:
      return strerror(e);
  }
}

int main(int argc, char** argv) {
  int make_dir = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--mkdir") == 0) {
      make_dir = 1;
      continue;
    }
    int ok;
    if (make_dir) {
      ok = mkdir(argv[i], 0755) == 0;
    } else {
      int fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      ok = fd >= 0 && write(fd, "x", 1) == 1;
      if (fd >= 0) close(fd);
    }
    printf("%s %s\n", argv[i], ok ? "ok" : errno_name(errno));
  }
  return 0;
}
