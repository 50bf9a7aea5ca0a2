#include "seccomp/connect_workers.hpp"

#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "jail/byte_text.hpp"

namespace jail {

struct ConnectWorkers::Shared {
  UniqueFd listener;
  std::optional<HostIds> connect_as;
  JailMembers jail;
  std::vector<SocketRefusal> refusals;  // guarded by mutex
  std::mutex mutex;
  std::condition_variable work;   // a job came, or the workers stop
  std::condition_variable ended;  // a worker ended
  std::deque<ConnectJob> queue;
  std::vector<int> in_flight;  // sockets being connected: shut down when the workers stop
  std::size_t threads = 0;
  std::size_t idle = 0;
  bool stopping = false;
};

namespace {

// This thread's credentials only: the raw calls, not glibc's, which would change every thread
// of the process. Without a way back: a worker never needs jail's rights again.
bool become(const HostIds& ids) {
  return ::syscall(SYS_setgroups, 0, nullptr) == 0 &&
         ::syscall(SYS_setresgid, ids.gid, ids.gid, ids.gid) == 0 &&
         ::syscall(SYS_setresuid, ids.uid, ids.uid, ids.uid) == 0;
}

// An abstract name on the host's network: the jail's only while a process of the jail listens
// on it. Checked right before the connect (never from a queue the tool could hold up), and the
// listener the connect reached is checked after it, so a name given up and taken by a host
// daemon in between is never a connection handed to the tool. Returns 0 to go on, or the errno
// with `refusal` filled.
int check_abstract(const ConnectJob& job, const JailMembers& jail, SocketRefusal& refusal) {
  const AbstractHolder holder = abstract_holder(*job.abstract_name, jail);
  if (holder == AbstractHolder::nobody) return ECONNREFUSED;
  if (holder == AbstractHolder::jail) return 0;
  refusal.target = "@" + printable(*job.abstract_name);
  refusal.why = "an abstract socket the jail did not make (--allow-abstract " +
                printable(*job.abstract_name) + " reaches it)";
  refusal.error = EPERM;  // what Landlock's abstract-socket scope answers
  return EPERM;
}

// 0, or the errno the tool's own connect would have got (`refusal` filled when refused).
int perform(const ConnectJob& job, const JailMembers& jail, SocketRefusal& refusal) {
  if (job.abstract_name) {
    if (const int error = check_abstract(job, jail, refusal)) return error;
  }
  int result = 0;
  if (job.target.valid()) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string link = "/proc/self/fd/" + std::to_string(job.target.get());
    std::memcpy(address.sun_path, link.c_str(), link.size() + 1);
    result = ::connect(job.socket.get(), reinterpret_cast<const sockaddr*>(&address),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + link.size() + 1));
  } else {
    result = ::connect(job.socket.get(), reinterpret_cast<const sockaddr*>(job.address.data()),
                       static_cast<socklen_t>(job.address.size()));
  }
  if (result != 0) return errno;
  if (job.abstract_name) {
    ucred peer{};
    socklen_t size = sizeof peer;
    if (::getsockopt(job.socket.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
        !is_jail_process(peer.pid, peer.uid, jail)) {
      ::shutdown(job.socket.get(), SHUT_RDWR);
      refusal.target = "@" + printable(*job.abstract_name);
      refusal.why =
          "an abstract socket a process outside the jail took over while the tool "
          "connected";
      refusal.error = EPERM;
      return EPERM;
    }
  }
  return 0;
}

void work(const std::shared_ptr<ConnectWorkers::Shared>& shared) {
  // A worker that could not take the tool's ids connects nothing: each of its jobs fails closed.
  const bool ready = !shared->connect_as || become(*shared->connect_as);
  std::unique_lock lock(shared->mutex);
  for (;;) {
    ++shared->idle;
    shared->work.wait(lock, [&] { return shared->stopping || !shared->queue.empty(); });
    --shared->idle;
    if (shared->queue.empty()) break;  // stopping
    ConnectJob job = std::move(shared->queue.front());
    shared->queue.pop_front();
    shared->in_flight.push_back(job.socket.get());
    lock.unlock();
    SocketRefusal refusal;
    const int error = ready ? perform(job, shared->jail, refusal) : EACCES;
    answer_notification(shared->listener.get(), job.id, error);
    lock.lock();
    if (refusal.error != 0) {
      refusal.args = job.args;
      refusal.pid = job.pid;
      shared->refusals.push_back(std::move(refusal));
    }
    // Out of the list before it is closed, so a stop never shuts down a reused number.
    std::erase(shared->in_flight, job.socket.get());
    job.socket.reset();
  }
  --shared->threads;
  shared->ended.notify_all();
}

}  // namespace

void answer_notification(int listener, std::uint64_t id, int error) {
  seccomp_notif_resp response{};
  response.id = id;
  response.error = -error;
  (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
}

ConnectWorkers::ConnectWorkers(UniqueFd listener, std::optional<HostIds> connect_as,
                               JailMembers jail)
    : shared_(std::make_shared<Shared>()) {
  shared_->listener = std::move(listener);
  shared_->connect_as = connect_as;
  shared_->jail = jail;
}

std::vector<SocketRefusal> ConnectWorkers::take_refusals() {
  std::lock_guard lock(shared_->mutex);
  return std::exchange(shared_->refusals, {});
}

ConnectWorkers::~ConnectWorkers() {
  std::unique_lock lock(shared_->mutex);
  shared_->stopping = true;
  shared_->queue.clear();  // the jail has ended: nobody waits for these
  for (const int socket : shared_->in_flight) ::shutdown(socket, SHUT_RDWR);
  shared_->work.notify_all();
  shared_->ended.wait_for(lock, std::chrono::seconds(1), [&] { return shared_->threads == 0; });
}

void ConnectWorkers::submit(ConnectJob job) {
  std::lock_guard lock(shared_->mutex);
  if (shared_->queue.size() >= kMaxQueued) {
    answer_notification(shared_->listener.get(), job.id, EAGAIN);
    return;
  }
  shared_->queue.push_back(std::move(job));
  if (shared_->queue.size() > shared_->idle && shared_->threads < kMaxWorkers) {
    try {
      std::thread(work, shared_).detach();
      ++shared_->threads;
    } catch (const std::system_error&) {
      // No thread to be had: the connects wait for a worker, or fail when there is none.
      if (shared_->threads == 0) {
        answer_notification(shared_->listener.get(), shared_->queue.back().id, EAGAIN);
        shared_->queue.pop_back();
      }
    }
  }
  shared_->work.notify_one();
}

}  // namespace jail
