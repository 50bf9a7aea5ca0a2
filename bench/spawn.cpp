// Start-up timing without shell noise: fork/exec/wait4 of each variant, interleaved in a rotating
// order within each round so a busy machine hits every variant alike.
//
//   spawn rounds RUNS NAME cmd args... [:: NAME cmd args...]...
//       RUNS rounds; prints, per variant, the median, 10th and 90th percentile of the wall time,
//       the median CPU time (user + system of the command and everything it reaped: for jail its
//       supervisor, init and tool), and the ratio of each median to the first variant's.
//   spawn many TOTAL PARALLEL NAME cmd args... [:: NAME cmd args...]...
//       TOTAL launches of each variant (one variant after the other), PARALLEL at a time;
//       prints launches per second, CPU per launch, and the largest peak RSS seen (for jail:
//       the supervisor's, the largest process of its tree).
//
// Every launch must exit 0: a failing variant measures nothing, so the driver stops (exit 2)
// and shows that variant's stderr.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Variant {
  std::string name;
  std::vector<std::string> argv;
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  long max_rss_kib = 0;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "spawn: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

double cpu_ms_of(const rusage& usage) {
  const auto ms = [](const timeval& tv) { return tv.tv_sec * 1e3 + tv.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// stdout goes to /dev/null, stderr to a file that is shown only when the launch fails.
pid_t start(const Variant& variant, int err_fd) {
  std::vector<char*> argv;
  for (const auto& arg : variant.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err_fd, 2);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

void check_status(const Variant& variant, int status, int err_fd) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::fprintf(stderr, "spawn: variant '%s' failed (status 0x%x); its stderr:\n",
               variant.name.c_str(), status);
  ::lseek(err_fd, 0, SEEK_SET);
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(err_fd, buffer, sizeof buffer)) > 0) {
    if (::write(2, buffer, static_cast<std::size_t>(n)) < 0) break;
  }
  std::exit(2);
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const auto low = static_cast<std::size_t>(position);
  const auto high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

std::vector<Variant> parse_variants(int argc, char** argv) {
  std::vector<Variant> variants;
  for (int i = 0; i < argc;) {
    Variant variant;
    variant.name = argv[i++];
    for (; i < argc && std::strcmp(argv[i], "::") != 0; ++i) variant.argv.emplace_back(argv[i]);
    if (i < argc) ++i;
    if (variant.argv.empty()) {
      std::fprintf(stderr, "spawn: variant '%s' has no command\n", variant.name.c_str());
      std::exit(2);
    }
    variants.push_back(std::move(variant));
  }
  if (variants.empty()) {
    std::fprintf(stderr, "spawn: no variants\n");
    std::exit(2);
  }
  return variants;
}

int rounds(int runs, std::vector<Variant>& variants, int err_fd) {
  const std::size_t count = variants.size();
  for (int round = 0; round < runs; ++round) {
    for (std::size_t k = 0; k < count; ++k) {
      Variant& variant = variants[(k + static_cast<std::size_t>(round)) % count];
      if (::ftruncate(err_fd, 0) != 0) die("ftruncate");
      ::lseek(err_fd, 0, SEEK_SET);
      const auto t0 = Clock::now();
      const pid_t pid = start(variant, err_fd);
      int status = 0;
      rusage usage{};
      if (::wait4(pid, &status, 0, &usage) != pid) die("wait4");
      const auto t1 = Clock::now();
      check_status(variant, status, err_fd);
      variant.wall_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      variant.cpu_ms.push_back(cpu_ms_of(usage));
    }
  }
  const double base_wall = percentile(variants[0].wall_ms, 0.5);
  const double base_cpu = percentile(variants[0].cpu_ms, 0.5);
  std::printf("%-34s %9s %9s %9s %9s %9s %9s\n", "variant", "median", "p10", "p90", "cpu", "ratio",
              "cpu ratio");
  std::printf("%-34s %9s %9s %9s %9s %9s %9s\n", "", "ms", "ms", "ms", "ms", "wall", "");
  for (const Variant& variant : variants) {
    const double median = percentile(variant.wall_ms, 0.5);
    const double cpu = percentile(variant.cpu_ms, 0.5);
    std::printf("%-34s %9.2f %9.2f %9.2f %9.2f %8.2fx %8.2fx\n", variant.name.c_str(), median,
                percentile(variant.wall_ms, 0.1), percentile(variant.wall_ms, 0.9), cpu,
                median / base_wall, base_cpu > 0 ? cpu / base_cpu : 0.0);
  }
  return 0;
}

int many(int total, int parallel, std::vector<Variant>& variants, int err_fd) {
  std::printf("%-34s %9s %11s %9s %12s\n", "variant", "wall s", "launches/s", "cpu ms",
              "peak RSS KiB");
  std::vector<double> rates;
  for (Variant& variant : variants) {
    if (::ftruncate(err_fd, 0) != 0) die("ftruncate");
    double cpu_total = 0;
    const auto t0 = Clock::now();
    int started = 0, running = 0;
    while (started < total || running > 0) {
      while (running < parallel && started < total) {
        start(variant, err_fd);
        ++started;
        ++running;
      }
      int status = 0;
      rusage usage{};
      if (::wait4(-1, &status, 0, &usage) < 0) die("wait4");
      --running;
      check_status(variant, status, err_fd);
      cpu_total += cpu_ms_of(usage);
      variant.max_rss_kib = std::max(variant.max_rss_kib, usage.ru_maxrss);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(total / seconds);
    std::printf("%-34s %9.2f %11.1f %9.2f %12ld\n", variant.name.c_str(), seconds, total / seconds,
                cpu_total / total, variant.max_rss_kib);
  }
  for (std::size_t i = 1; i < variants.size(); ++i) {
    std::printf("throughput %s / %s: %.2fx\n", variants[i].name.c_str(), variants[0].name.c_str(),
                rates[i] / rates[0]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: spawn rounds RUNS NAME cmd... [:: NAME cmd...]...\n"
                 "       spawn many TOTAL PARALLEL NAME cmd... [:: NAME cmd...]...\n");
    return 2;
  }
  char err_template[] = "/tmp/spawn-stderr-XXXXXX";
  const int err_fd = ::mkstemp(err_template);
  if (err_fd < 0) die("mkstemp");
  ::unlink(err_template);
  const std::string mode = argv[1];
  if (mode == "rounds") {
    auto variants = parse_variants(argc - 3, argv + 3);
    return rounds(std::atoi(argv[2]), variants, err_fd);
  }
  if (mode == "many" && argc >= 5) {
    auto variants = parse_variants(argc - 4, argv + 4);
    return many(std::atoi(argv[2]), std::max(1, std::atoi(argv[3])), variants, err_fd);
  }
  std::fprintf(stderr, "spawn: unknown mode '%s'\n", mode.c_str());
  return 2;
}
