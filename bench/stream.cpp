// Streaming throughput: `cat` against `jail -- cat` (the caller's pipes handed to the tool) and
// `jail --max-output … -- cat` (stdout relayed by jail's supervisor), with `cat | cat` (one more
// pipe hop, no jail) for reference; on pipes, interleaved in one run so that a noisy machine hits
// every variant alike. Prints the median of each and the ratios to plain cat.
//
//   stream --jail build/jail [--mib 512] [--reps 7]
//
// Each repetition pushes --mib MiB through each variant (in a rotating order): a writer thread
// feeds stdin from a fixed buffer, the main thread drains stdout. "end to end" is spawn to end of
// file, start-up included; "streaming" is first byte to end of file; "CPU per GiB" is the user +
// system time of the command and everything it reaped (for jail: the supervisor, the jail's init
// and cat), which a busy machine disturbs far less than wall-clock rates.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Variant {
  std::string name;
  std::vector<std::string> argv;
  std::vector<double> end_to_end_mbps;
  std::vector<double> streaming_mbps;
  std::vector<double> first_byte_ms;
  std::vector<double> cpu_s_per_gib;
};

struct Sample {
  double end_to_end_s = 0;
  double streaming_s = 0;
  double first_byte_s = 0;
  double cpu_s = 0;  // user + system of the child and everything it reaped (jail: its tool too)
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "stream: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

Sample run_once(const std::vector<std::string>& args, std::size_t bytes) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe2");
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    if (::dup2(in[0], 0) < 0 || ::dup2(out[1], 1) < 0) ::_exit(126);
    ::execvpe(argv[0], argv.data(), environ);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);

  std::thread writer([fd = in[1], bytes] {
    static std::vector<char> block = [] {
      std::vector<char> b(1 << 20);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>('a' + i % 26);
      return b;
    }();
    std::size_t left = bytes;
    while (left > 0) {
      const ssize_t n = ::write(fd, block.data(), std::min(left, block.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
  });

  static std::vector<char> sink(1 << 20);
  std::size_t got = 0;
  std::optional<Clock::time_point> first;
  for (;;) {
    const ssize_t n = ::read(out[0], sink.data(), sink.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!first) first = Clock::now();
    got += static_cast<std::size_t>(n);
  }
  const auto end = Clock::now();
  ::close(out[0]);
  writer.join();
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  if (got != bytes || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "stream: %s: got %zu of %zu bytes, status %d\n", args.front().c_str(), got,
                 bytes, status);
    std::exit(1);
  }
  Sample s;
  s.end_to_end_s = std::chrono::duration<double>(end - start).count();
  s.first_byte_s = std::chrono::duration<double>(*first - start).count();
  s.streaming_s = std::chrono::duration<double>(end - *first).count();
  s.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return s;
}

// The first three fields of /proc/loadavg: how busy the machine was.
std::string loadavg() {
  char buf[128] = {};
  std::FILE* f = std::fopen("/proc/loadavg", "re");
  if (f == nullptr) return "?";
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string text(buf, n);
  std::size_t end = 0;
  for (int field = 0; field < 3 && end != std::string::npos; ++field) {
    end = text.find(' ', end + (field > 0 ? 1 : 0));
  }
  return text.substr(0, end);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string jail;
  std::size_t mib = 512;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--jail")
      jail = argv[i + 1];
    else if (flag == "--mib")
      mib = std::strtoul(argv[i + 1], nullptr, 10);
    else if (flag == "--reps")
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: stream --jail PATH [--mib N] [--reps N]\n");
      return 2;
    }
  }
  if (jail.empty() || mib == 0 || reps < 1) {
    std::fprintf(stderr, "usage: stream --jail PATH [--mib N] [--reps N]\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  const std::size_t bytes = mib << 20;
  // The cap is far above what is sent: the relay runs, nothing is cut.
  std::vector<Variant> variants{
      {"cat", {"cat"}, {}, {}, {}, {}},
      {"jail -- cat", {jail, "-q", "--", "cat"}, {}, {}, {}, {}},
      {"jail --max-output -- cat", {jail, "-q", "--max-output", "1T", "--", "cat"}, {}, {}, {}, {}},
      // For reference: what one more pipe hop costs without jail (the relay is one more hop).
      {"cat | cat", {"sh", "-c", "cat | cat"}, {}, {}, {}, {}},
  };
  // One untimed round so that page cache and first-run costs hit no variant in particular.
  for (auto& v : variants) (void)run_once(v.argv, std::min<std::size_t>(bytes, 64u << 20));

  const std::string load_before = loadavg();
  std::printf("streaming %zu MiB through each variant, %d repetitions, interleaved\n", mib, reps);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < variants.size(); ++k) {
      Variant& v = variants[(k + static_cast<std::size_t>(r)) % variants.size()];
      const Sample s = run_once(v.argv, bytes);
      const double mb = static_cast<double>(bytes) / 1e6;
      v.end_to_end_mbps.push_back(mb / s.end_to_end_s);
      v.streaming_mbps.push_back(mb / s.streaming_s);
      v.first_byte_ms.push_back(s.first_byte_s * 1e3);
      v.cpu_s_per_gib.push_back(s.cpu_s * static_cast<double>(1ull << 30) /
                                static_cast<double>(bytes));
    }
  }

  std::printf("%-26s %14s %14s %13s %16s\n", "variant", "end to end", "streaming", "first byte",
              "CPU per GiB");
  for (const auto& v : variants) {
    std::printf("%-26s %9.0f MB/s %9.0f MB/s %10.1f ms %14.3f s\n", v.name.c_str(),
                median(v.end_to_end_mbps), median(v.streaming_mbps), median(v.first_byte_ms),
                median(v.cpu_s_per_gib));
  }
  // Each repetition's variant against that same repetition's cat, then the median: a burst of
  // load hits both sides of a ratio alike.
  auto paired = [&](const Variant& v, std::vector<double> Variant::*field) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < (v.*field).size(); ++i) {
      ratios.push_back((v.*field)[i] / (variants[0].*field)[i]);
    }
    return median(ratios);
  };
  const struct {
    const Variant& v;
    double goal;
  } goals[] = {{variants[1], 0.95}, {variants[2], 0.80}, {variants[3], 0.0}};
  for (const auto& g : goals) {
    const double ratio = paired(g.v, &Variant::end_to_end_mbps);
    const double streaming = paired(g.v, &Variant::streaming_mbps);
    std::printf("ratio %-30s %.3f end to end, %.3f streaming", (g.v.name + " / cat:").c_str(),
                ratio, streaming);
    if (g.goal > 0) {
      std::printf(" (goal >= %.2f): %s", g.goal, ratio >= g.goal ? "met" : "NOT met");
    } else {
      std::printf(" (reference, no goal)");
    }
    std::printf("\n");
  }
  std::printf("load average before / after: %s / %s\n", load_before.c_str(), loadavg().c_str());
  return 0;
}
