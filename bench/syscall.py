# The Python variant of bench/syscall.c: os.getppid() and a 1-byte os.read() from /dev/zero in
# a loop; prints CPU nanoseconds per iteration, start-up excluded.
import os
import sys
import time

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
fd = os.open("/dev/zero", os.O_RDONLY)
getppid, read = os.getppid, os.read
start = time.process_time_ns()
for _ in range(iterations):
    getppid()
    read(fd, 1)
print(f"{(time.process_time_ns() - start) / iterations:.1f}")
