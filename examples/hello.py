"""A first script to run in a jail: shows what the jailed tool can and cannot see."""
import os
import socket

print(f"hello from pid {os.getpid()} as uid {os.getuid()} on host '{socket.gethostname()}'")
print(f"cwd: {os.getcwd()}")
print(f"processes visible: {sorted(int(p) for p in os.listdir('/proc') if p.isdigit())}")
print(f"$HOME visible: {os.path.exists(os.path.expanduser('~')) and os.path.expanduser('~')}")
print(f"/etc/shadow visible: {os.path.exists('/etc/shadow')}")
print(f"network interfaces: {[name for _, name in socket.if_nameindex()]}")
try:
    open("hello-was-here", "w")
    print("write to cwd: allowed")
except OSError as e:
    print(f"write to cwd: refused ({e.strerror})")
