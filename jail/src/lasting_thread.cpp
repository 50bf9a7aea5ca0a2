#include "lasting_thread.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {
namespace {

struct LastingThread {
  pid_t owner = ::getpid();
  std::mutex one_call;  // held by the caller for its whole call
  std::mutex mutex;
  std::condition_variable changed;
  const std::function<void()>* pending = nullptr;  // guarded by mutex
  bool done = false;

  void serve() {
    for (;;) {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return pending != nullptr && !done; });
      const std::function<void()>* call = pending;
      lock.unlock();
      (*call)();
      lock.lock();
      done = true;
      changed.notify_all();
    }
  }
};

LastingThread& lasting_thread() {
  static std::mutex guard;
  // Never destroyed: the thread serves until the process ends. After a fork the thread is gone
  // (only the forking thread is copied) and its mutexes may be held for ever, so the child makes
  // a new one and leaves the old one be.
  static LastingThread* current = nullptr;
  const std::lock_guard lock(guard);
  if (current != nullptr && current->owner == ::getpid()) return *current;
  auto* fresh = new LastingThread;
  sigset_t all, before;
  sigfillset(&all);
  // Created with every signal blocked, which it keeps: a signal for the host (SIGTERM, SIGCHLD,
  // one it takes with sigwait) must go to a thread of the host's.
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  try {
    std::thread([fresh] { fresh->serve(); }).detach();
  } catch (const std::system_error& error) {
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    delete fresh;
    throw Error("clone", error.code().value(),
                fmt::format("cannot start the thread jail starts runsc from: {}; the caller is at "
                            "its limit of processes and threads (RLIMIT_NPROC, or its pids "
                            "cgroup): raise it, or run fewer jails at once",
                            std::strerror(error.code().value())));
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  current = fresh;
  return *current;
}

}  // namespace

void on_lasting_thread(const std::function<void()>& call) {
  LastingThread& thread = lasting_thread();
  const std::lock_guard serial(thread.one_call);
  std::unique_lock lock(thread.mutex);
  thread.pending = &call;
  thread.done = false;
  thread.changed.notify_all();
  thread.changed.wait(lock, [&] { return thread.done; });
  thread.pending = nullptr;
}

}  // namespace jail
