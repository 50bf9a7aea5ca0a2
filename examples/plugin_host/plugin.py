"""A third-party plugin, as a plugin host meets it: JSON lines in on stdin, JSON lines out.

Each request is {"id": N, "method": NAME, "params": [...]}; each answer is {"id": N, "result": ...}
or {"id": N, "error": "..."}. The plugin ends when stdin ends. It knows nothing of the jail: the
host decides what it may see and how long it may run. Diagnostics go to stderr, never to stdout,
which is the protocol channel.
"""
import json
import os
import sys
import time


def add(a, b):
    return a + b


def upper(text):
    return text.upper()


def word_count(text):
    return len(text.split())


def whoami():
    # What the plugin sees of the world: its own pid namespace (it is not pid 1: jail's reaper
    # is), an unprivileged identity, a home that is an empty /tmp.
    return {
        "pid": os.getpid(),
        "uid": os.getuid(),
        "home_files": sorted(os.listdir(os.environ.get("HOME", "/tmp"))),
        "can_read_shadow": os.access("/etc/shadow", os.R_OK),
    }


def sleep(seconds):
    # A plugin that hangs: the host's timeout is what ends it.
    time.sleep(seconds)
    return seconds


METHODS = {"add": add, "upper": upper, "word_count": word_count, "whoami": whoami, "sleep": sleep}


def answer(request):
    method = METHODS.get(request.get("method"))
    if method is None:
        return {"id": request.get("id"), "error": f"unknown method {request.get('method')!r}"}
    try:
        return {"id": request.get("id"), "result": method(*request.get("params", []))}
    except Exception as e:  # a bad request must not end the plugin
        return {"id": request.get("id"), "error": f"{type(e).__name__}: {e}"}


def main():
    print("plugin: ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            response = {"id": None, "error": f"not JSON: {e}"}
        else:
            response = answer(request)
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
    print("plugin: stdin closed, bye", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
