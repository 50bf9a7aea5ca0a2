#include "run_jail.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "../support/time_scale.hpp"

extern char** environ;

namespace jail_test {
namespace {

[[noreturn]] void fail_in_child(const char* what) {
  // Only async-signal-safe calls between fork and exec.
  const char prefix[] = "run_jail: child setup failed: ";
  (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
  (void)!write(STDERR_FILENO, what, strlen(what));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(120);
}

std::string truncated(const std::string& text) {
  constexpr std::size_t kMax = 6000;
  if (text.size() <= kMax) return text;
  return text.substr(0, kMax) + "\n[... " + std::to_string(text.size() - kMax) + " more bytes]";
}

// The caller's environment, plus the secret marker, plus `extra` (which replaces same-named).
std::vector<std::string> caller_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  std::vector<std::string> additions = extra;
  additions.push_back(std::string(kCallerSecretName) + "=" + kCallerSecretValue);
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    bool replaced = std::any_of(additions.begin(), additions.end(),
                                [&](const std::string& a) { return name_of(a) == name_of(kv); });
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), additions.begin(), additions.end());
  return env;
}

}  // namespace

std::string describe(const RunResult& result) {
  std::ostringstream s;
  s << "jail exit_code=" << result.exit_code << " signal=" << result.signal
    << " timed_out=" << (result.timed_out ? "yes" : "no") << "\n--- stdout ---\n"
    << truncated(result.out) << "\n--- stderr ---\n"
    << truncated(result.err) << "\n--- end ---";
  return s.str();
}

JailProcess::JailProcess(const std::vector<std::string>& args, const RunOptions& options) {
  // Everything the child needs is prepared before fork.
  std::vector<std::string> argv_storage = options.wrapper;
  argv_storage.emplace_back(JAIL_BINARY);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = caller_environment(options.extra_env);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  int in_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  if (!options.stdin_data.empty() && pipe2(in_pipe, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  const bool drop = options.caller == Caller::unprivileged;
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();

  pid_ = fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    int in_fd = options.stdin_fd >= 0 ? options.stdin_fd : in_pipe[0];
    if (in_fd < 0) in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in_fd < 0 || dup2(in_fd, STDIN_FILENO) < 0) fail_in_child("stdin");
    if (options.stdin_closed) ::close(STDIN_FILENO);
    if (options.own_process_group && ::setpgid(0, 0) != 0) fail_in_child("setpgid");
    int out_fd = options.stdout_fd >= 0 ? options.stdout_fd : out_pipe[1];
    if (dup2(out_fd, STDOUT_FILENO) < 0) fail_in_child("stdout");
    int err_fd = options.stderr_fd >= 0 ? options.stderr_fd : err_pipe[1];
    if (dup2(err_fd, STDERR_FILENO) < 0) fail_in_child("stderr");
    if (options.extra_fd) {
      const ExtraFd& x = *options.extra_fd;
      if (x.fd == x.as) {
        if (fcntl(x.as, F_SETFD, 0) != 0) fail_in_child("extra fd");
      } else if (dup2(x.fd, x.as) < 0) {
        fail_in_child("extra fd");
      }
    }
    if (cwd != nullptr && chdir(cwd) != 0) fail_in_child("chdir");
    if (drop) {
      if (setgroups(0, nullptr) != 0) fail_in_child("setgroups");
      if (setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0) fail_in_child("setresgid");
      if (setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0) fail_in_child("setresuid");
    }
    execve(argv[0], argv.data(), envp.data());
    fail_in_child("execve " JAIL_BINARY);
  }

  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  if (in_pipe[0] >= 0) {
    close(in_pipe[0]);
    // Small inputs only: they fit in the pipe buffer, so this cannot block.
    (void)!write(in_pipe[1], options.stdin_data.data(), options.stdin_data.size());
    close(in_pipe[1]);
  }
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd_ < 0) throw std::system_error(errno, std::generic_category(), "pidfd_open");
}

JailProcess::~JailProcess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    try {
      (void)remove_cgroups_left_by(pid_);
    } catch (...) {  // a destructor: whatever is left, the next jail removes a minute later
    }
  }
  for (int fd : {pidfd_, out_fd_, err_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void JailProcess::read_some(int& fd, std::string& sink) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      sink.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    close(fd);  // EOF or error
    fd = -1;
    return;
  }
}

template <typename Stop>
void JailProcess::pump(Clock::time_point deadline, Stop stop) {
  while (!stop()) {
    auto now = Clock::now();
    if (now >= deadline) return;
    pollfd fds[3];
    nfds_t n = 0;
    if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
    if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
    if (!exited_) fds[n++] = {pidfd_, POLLIN, 0};
    if (n == 0) return;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    int rc = poll(fds, n, static_cast<int>(std::clamp<long long>(left, 1, 1000)));
    if (rc < 0 && errno != EINTR) return;
    if (out_fd_ >= 0) read_some(out_fd_, out_);
    if (err_fd_ >= 0) read_some(err_fd_, err_);
    if (!exited_ && waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  }
}

bool JailProcess::wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout) {
  pump(Clock::now() + scaled(timeout),
       [&] { return out_.find(needle) != std::string::npos || exited_ || out_fd_ < 0; });
  return out_.find(needle) != std::string::npos;
}

RunResult JailProcess::wait(std::chrono::milliseconds timeout) {
  RunResult result;
  pump(Clock::now() + scaled(timeout), [&] { return exited_; });
  if (!exited_) {
    result.timed_out = true;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    exited_ = true;
    (void)remove_cgroups_left_by(pid_);
  }
  // jail has gone; its output ends when every holder of the pipes has gone too. A jailed process
  // that outlives jail would keep them open, so the grace is bounded.
  pump(Clock::now() + scaled(2s), [&] { return out_fd_ < 0 && err_fd_ < 0; });
  if (WIFEXITED(status_)) result.exit_code = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) result.signal = WTERMSIG(status_);
  result.out = out_;
  result.err = err_;
  return result;
}

RunResult run_jail(const std::vector<std::string>& args, const RunOptions& options) {
  JailProcess process(args, options);
  return process.wait(options.timeout);
}

TempDir::TempDir() {
  std::string templ = "/var/tmp/jail-itest-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp");
  }
  path_ = templ;
  if (chmod(path_.c_str(), 0755) != 0 || chown(path_.c_str(), kNobodyUid, kNobodyGid) != 0) {
    throw std::system_error(errno, std::generic_category(), "chmod/chown " + path_);
  }
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::operator/(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

void write_file(const std::string& path, std::string_view content, mode_t mode) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << content;
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  if (chmod(path.c_str(), mode) != 0 || chown(path.c_str(), kNobodyUid, kNobodyGid) != 0) {
    throw std::system_error(errno, std::generic_category(), "chmod/chown " + path);
  }
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int processes_with(const std::string& marker) {
  int count = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::optional<std::string> cmdline = read_file(std::string("/proc/") + e->d_name + "/cmdline");
    if (cmdline && cmdline->find(marker) != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

std::vector<std::string> remove_cgroups_left_by(pid_t jail_pid) {
  namespace fs = std::filesystem;
  const std::string prefix = "jail-" + std::to_string(jail_pid) + "-";
  std::vector<std::string> found;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    before >> id >> parent >> dev >> root >> mount_point;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(mount_point, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() > 6) it.disable_recursion_pending();
      if (it->path().filename().string().starts_with(prefix)) {
        for (auto inner = fs::recursive_directory_iterator(it->path(), ec);
             !ec && inner != fs::recursive_directory_iterator(); inner.increment(ec)) {
          if (inner->is_directory(ec)) found.push_back(inner->path());
        }
        found.push_back(it->path());
        it.disable_recursion_pending();
      }
    }
  }
  // Deepest first; each once its processes (the tool dies after its jail) have gone.
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
  });
  std::vector<std::string> left;
  for (const std::string& dir : found) {
    const auto deadline = std::chrono::steady_clock::now() + scaled(10s);
    while (trim(read_file(dir + "/cgroup.procs").value_or("")) != "" &&
           std::chrono::steady_clock::now() < deadline) {
      usleep(20000);
    }
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT) left.push_back(dir);
  }
  return left;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> concat(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::string trim(std::string_view text) {
  const char* space = " \t\r\n";
  std::size_t b = text.find_first_not_of(space);
  if (b == std::string_view::npos) return {};
  std::size_t e = text.find_last_not_of(space);
  return std::string(text.substr(b, e - b + 1));
}

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(("{ " + command + "; } 2>&1").c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  return out;
}

std::vector<std::string> probe_mount() {
  return {"--ro-bind", std::string(JAIL_PROBE_DIR) + ":/probes"};
}

std::string probe(std::string_view name) {
  return "/probes/" + std::string(name);
}

RunResult CallerTest::run(const std::vector<std::string>& args, RunOptions options) {
  options.caller = caller();
  if (options.cwd.empty()) options.cwd = cwd_.path();
  return run_jail(args, options);
}

std::unique_ptr<JailProcess> CallerTest::start(const std::vector<std::string>& args,
                                               RunOptions options) {
  options.caller = caller();
  if (options.cwd.empty()) options.cwd = cwd_.path();
  return std::make_unique<JailProcess>(args, options);
}

std::string caller_name(const ::testing::TestParamInfo<Caller>& info) {
  return info.param == Caller::root ? "root" : "unprivileged";
}

}  // namespace jail_test
