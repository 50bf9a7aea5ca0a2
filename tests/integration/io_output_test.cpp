// The tool's output under a cap (--max-output), a tool that closes its output and stays, a tool
// with no input (--stdin none), and jail's own messages kept apart (--log-fd, --log-file).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/proc_stat.hpp"
#include "../support/shell_quote.hpp"
#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "io_spawn.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using Clock = std::chrono::steady_clock;
using io::Exit;
using io::Pipe;
using io::ScratchFile;
using io::Spawned;

nlohmann::json status_json(const std::string& path) {
  const auto text = read_file(path);
  if (!text) return {};
  return nlohmann::json::parse(*text, nullptr, false);
}

// A field of /proc/<pid>/status in kB ("VmHWM", "RssAnon"), or -1 when it cannot be read (the
// process has ended: a zombie has no memory fields).
long proc_status_kb(pid_t pid, const std::string& field) {
  const auto text = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!text) return -1;
  const std::string key = "\n" + field + ":";
  const std::size_t at = text->find(key);
  if (at == std::string::npos) return -1;
  return std::strtol(text->c_str() + at + key.size(), nullptr, 10);
}

// What one capped run did, and how much memory jail itself held while it ran.
struct CappedRun {
  std::uint64_t received = 0;
  bool only_yes = true;  // every byte was part of "y\n"
  std::optional<Exit> exit;
  nlohmann::json status;
  std::string err;
  long hwm_kb = -1;   // the supervisor's own VmHWM, last sample before it ended
  long anon_kb = -1;  // the largest RssAnon seen
  int samples = 0;
  double seconds = 0;
};

// The tool's stdin: /dev/null, or a pipe the test closes only once it has sampled jail while the
// tool runs (a tool that ends at once could otherwise be sampled only while jail still starts).
enum class Input { none, held_until_sampled };

// Whether a descendant of `pid` runs `program` (its whole command line).
bool runs(pid_t pid, const std::string& program) {
  for (const pid_t descendant : descendants(pid)) {
    if (command_line(descendant) == program + '\0') return true;
  }
  return false;
}

// Runs `jail --max-output <cap> -- <command>` with stdout on a pipe the test drains, sampling
// jail's /proc/<pid>/status all the while. VmHWM is a high-water mark, so the last sample taken
// before jail ends covers the whole run up to that point; it counts only jail's own process (the
// supervisor), not the jail's init or the tool, which are other processes.
CappedRun run_capped(const std::string& cap, const std::vector<std::string>& command, Caller caller,
                     const TempDir& dir, Input input = Input::none) {
  ::signal(SIGPIPE, SIG_IGN);
  Pipe in;
  Pipe out;
  ScratchFile err(dir / "stderr");
  const std::string status_path = dir / "status.json";
  std::vector<std::string> args{"-q", "--max-output", cap, "--status-file", status_path, "--"};
  args.insert(args.end(), command.begin(), command.end());
  CappedRun run;
  const auto start = Clock::now();
  {
    const bool held = input == Input::held_until_sampled;
    Spawned jail(args, caller, dir.path(),
                 {.in = held ? in.read_end() : -1, .out = out.write_end(), .err = err.fd()});
    in.close_read();
    out.close_write();
    std::atomic<bool> done{false};
    std::atomic<int> samples{0};
    std::thread sampler([&] {
      while (!done) {
        const long hwm = proc_status_kb(jail.pid(), "VmHWM");
        const long anon = proc_status_kb(jail.pid(), "RssAnon");
        if (hwm > 0) {
          run.hwm_kb = hwm;
          run.anon_kb = std::max(run.anon_kb, anon);
          ++samples;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    if (held) {
      // The tool runs, so jail is up; one sample after that, and the tool may end.
      EXPECT_TRUE(wait_until([&] { return runs(jail.pid(), command.front()); }, 20s))
          << "the tool never ran";
      const int before = samples;
      EXPECT_TRUE(wait_until([&] { return samples > before; }, 20s)) << "jail was never sampled";
    }
    in.close_write();
    std::vector<char> buf(1 << 16);
    const auto deadline = start + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      pollfd p{out.read_end(), POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) continue;
      const ssize_t n = ::read(out.read_end(), buf.data(), buf.size());
      if (n <= 0) break;
      for (ssize_t i = 0; i < n && run.only_yes; ++i) {
        const std::uint64_t at = run.received + static_cast<std::uint64_t>(i);
        run.only_yes = buf[static_cast<std::size_t>(i)] == (at % 2 == 0 ? 'y' : '\n');
      }
      run.received += static_cast<std::uint64_t>(n);
    }
    run.exit = jail.wait(std::chrono::seconds(30));
    done = true;
    sampler.join();
    run.samples = samples;
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.status = status_json(status_path);
  run.err = err.contents();
  return run;
}

std::string describe(const CappedRun& r) {
  return "received " + std::to_string(r.received) + " bytes in " + std::to_string(r.seconds) +
         " s; jail " + (r.exit ? r.exit->text() : "did not end") + "; status " + r.status.dump() +
         "\n--- jail's stderr ---\n" + r.err.substr(0, 4000);
}

class IoOutput : public CallerTest {};

TEST_P(IoOutput, MaxOutputCutsYesAtExactlyOneMebibyteInLittleMemory) {
  // The baseline: jail with the same relay and a tool that writes nothing, sampled while it runs.
  TempDir quiet_dir;
  CappedRun quiet = run_capped("1M", {"cat"}, caller(), quiet_dir, Input::held_until_sampled);
  ASSERT_TRUE(quiet.exit && quiet.exit->exited_with(0)) << describe(quiet);

  CappedRun r = run_capped("1M", {"yes"}, caller(), cwd_);
  ASSERT_TRUE(r.exit) << describe(r);
  EXPECT_EQ(r.received, 1u << 20) << describe(r);
  EXPECT_TRUE(r.only_yes) << "the output is not yes's\n" << describe(r);
  ASSERT_TRUE(r.status.is_object()) << describe(r);
  EXPECT_EQ(r.status.value("output_truncated", false), true) << describe(r);
  EXPECT_EQ(r.status["limit_hit"], "output") << describe(r);  // the cut is what ended yes
  // yes is ended by SIGPIPE (or exits on EPIPE): either way the run says so.
  const std::string outcome = r.status.value("outcome", "");
  EXPECT_TRUE(outcome == "signaled" || outcome == "exited") << describe(r);
  if (outcome == "signaled") {
    EXPECT_EQ(r.status.value("signal", 0), SIGPIPE) << describe(r);
  } else {
    EXPECT_NE(r.status.value("exit_code", 0), 0) << describe(r);
  }
  EXPECT_EQ(r.exit->exited_with(r.status.value("jail_exit_code", -1)), true) << describe(r);

  // The flood must not grow jail: 256 MiB of yes through the relay costs what 1 MiB does.
  TempDir flood_dir;
  CappedRun flood = run_capped("256M", {"yes"}, caller(), flood_dir);
  ASSERT_TRUE(flood.exit) << describe(flood);
  EXPECT_EQ(flood.received, 256u << 20) << describe(flood);
  EXPECT_EQ(flood.status.value("output_truncated", false), true) << describe(flood);

  std::printf(
      "[ memory   ] jail's own peak (VmHWM, supervisor process only), max RssAnon:\n"
      "[ memory   ]   --max-output 1M -- cat:   %ld kB, %ld kB (%d samples)\n"
      "[ memory   ]   --max-output 1M -- yes:   %ld kB, %ld kB (%d samples)\n"
      "[ memory   ]   --max-output 256M -- yes: %ld kB, %ld kB (%d samples, %.2f s)\n"
      "[ memory   ] ru_maxrss from wait4 (jail and everything it reaped: the jail's init, a copy\n"
      "[ memory   ]   of jail from clone, and through it the tool): %ld / %ld / %ld kB\n",
      quiet.hwm_kb, quiet.anon_kb, quiet.samples, r.hwm_kb, r.anon_kb, r.samples, flood.hwm_kb,
      flood.anon_kb, flood.samples, flood.seconds, quiet.exit->usage.ru_maxrss,
      r.exit->usage.ru_maxrss, flood.exit->usage.ru_maxrss);
  ASSERT_GT(r.samples, 0) << "jail ended before its memory could be read once";
  ASSERT_GT(flood.samples, 0);
  // "A few MiB": jail's own private memory, and no growth with the volume of output.
  EXPECT_LT(flood.anon_kb, 4 * 1024) << "jail's private memory while relaying a flood";
  EXPECT_LT(flood.hwm_kb - quiet.hwm_kb, 1024) << "jail grew with the tool's output";
  EXPECT_LT(flood.hwm_kb, 16 * 1024) << "jail's resident set, shared libraries included";
}

TEST_P(IoOutput, MaxOutputCountsStdoutAndStderrTogether) {
  const std::string status_path = cwd_ / "status.json";
  RunResult r = run({"-q", "--max-output", "1M", "--status-file", status_path, "--", "sh", "-c",
                     "head -c 700000 /dev/zero; head -c 700000 /dev/zero >&2; echo after >&2"});
  EXPECT_EQ(r.out.size(), 700000u) << "exit " << r.exit_code << "\n" << r.err.substr(0, 200);
  EXPECT_EQ(r.out.size() + r.err.size(), 1u << 20) << "exit " << r.exit_code;
  EXPECT_EQ(r.err.find("after"), std::string::npos);
  const auto status = status_json(status_path);
  EXPECT_EQ(status.value("output_truncated", false), true) << status.dump();
  EXPECT_EQ(status["limit_hit"], "output") << status.dump();
}

// With a terminal for the tool (--tty always, or auto at a terminal) the cap holds too: the pty
// relay counts, and past the cap hangs the terminal up (SIGHUP, as a pipe's closed end gives
// SIGPIPE). It relayed everything before.
TEST_P(IoOutput, MaxOutputHoldsForATerminalToo) {
  const std::string status_path = cwd_ / "status.json";
  RunResult r = run({"-q", "--tty", "always", "--max-output", "10", "--status-file", status_path,
                     "--", "sh", "-c", "yes | head -c 100000; echo after"});
  EXPECT_EQ(r.out.size(), 10u) << describe(r);
  EXPECT_EQ(r.out.find("after"), std::string::npos);
  const auto status = status_json(status_path);
  EXPECT_EQ(status.value("output_truncated", false), true) << status.dump();
  EXPECT_EQ(status["limit_hit"], "output") << status.dump();
}

TEST_P(IoOutput, OutputOfExactlyTheCapIsNotCut) {
  const std::string status_path = cwd_ / "status.json";
  RunResult r = run({"-q", "--max-output", "1M", "--status-file", status_path, "--", "sh", "-c",
                     "head -c 1048576 /dev/zero"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 1u << 20);
  const auto status = status_json(status_path);
  EXPECT_EQ(status.value("outcome", ""), "exited") << status.dump();
  EXPECT_EQ(status.value("output_truncated", true), false) << status.dump();
  EXPECT_TRUE(status["limit_hit"].is_null()) << status.dump();
}

// A caller that stops reading (a full pipe) must make the relay wait, not spin.
TEST_P(IoOutput, RelayWaitsForAStalledReaderWithoutSpinning) {
  Pipe out;
  ScratchFile err(cwd_ / "stderr");
  Spawned jail({"-q", "--max-output", "1G", "--", "yes"}, caller(), cwd_.path(),
               {.out = out.write_end(), .err = err.fd()});
  out.close_write();
  // The caller's pipe fills up (to within a page: splice moves whole pipe buffers).
  const long capacity = ::fcntl(out.read_end(), F_GETPIPE_SZ);
  ASSERT_GT(capacity, 0);
  const long full = capacity - ::sysconf(_SC_PAGESIZE);
  int queued = 0;
  ASSERT_TRUE(wait_until(
      [&] { return ::ioctl(out.read_end(), FIONREAD, &queued) == 0 && queued >= full; }, 10s))
      << "the caller's pipe holds " << queued << " of " << capacity << " bytes\n"
      << err.contents();
  const double before = cpu_seconds(jail.pid());
  // Not a readiness wait: the window in which a waiting supervisor may use no CPU.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double after = cpu_seconds(jail.pid());
  ASSERT_GE(before, 0) << "jail ended early:\n" << err.contents();
  ASSERT_GE(after, 0) << "jail ended early:\n" << err.contents();
  std::printf("[ relay    ] jail's CPU time during 2 s of a stalled reader: %.2f s\n",
              after - before);
  EXPECT_LT(after - before, 0.2) << "the supervisor spins while the caller's pipe is full";
  jail.kill(SIGKILL);
  (void)jail.wait(std::chrono::seconds(10));
  EXPECT_EQ(remove_cgroups_left_by(jail.pid()), std::vector<std::string>{});
}

TEST_P(IoOutput, ToolClosingItsOutputIsStillBoundedByTimeout) {
  for (const bool relayed : {false, true}) {
    const std::string status_path = cwd_ / (relayed ? "relayed.json" : "direct.json");
    std::vector<std::string> args{"--timeout", "2s", "--status-file", status_path};
    if (relayed) args.insert(args.end(), {"--max-output", "1M"});
    args.insert(args.end(), {"--", "sh", "-c", "exec >&- 2>&-; exec sleep 60"});
    const auto start = Clock::now();
    RunResult r = run(args, {.timeout = 40s});
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    SCOPED_TRACE(relayed ? "through the relay (--max-output)" : "stdio handed over directly");
    EXPECT_FALSE(r.timed_out) << describe(r);
    EXPECT_EQ(r.exit_code, 124) << describe(r);
    EXPECT_GE(seconds, 1.9) << describe(r);
    EXPECT_LT(seconds, scaled(20.0)) << describe(r);
    const auto status = status_json(status_path);
    EXPECT_EQ(status.value("outcome", ""), "timeout") << status.dump();
  }
}

TEST_P(IoOutput, StdinNoneGivesEndOfFileAtOnce) {
  // stdin is a pipe the test holds open and never writes: without --stdin none, cat would wait.
  for (const bool none : {true, false}) {
    Pipe in, out;
    ScratchFile err(cwd_ / "stderr");
    std::vector<std::string> args{"-q", "--timeout", "3s"};
    if (none) args.insert(args.end(), {"--stdin", "none"});
    args.insert(args.end(),
                {"--", "sh", "-c", "readlink /proc/self/fd/0; cat; echo \"cat ended $?\""});
    std::string got;
    std::optional<Exit> exit;
    const auto start = Clock::now();
    {
      Spawned jail(args, caller(), cwd_.path(),
                   {.in = in.read_end(), .out = out.write_end(), .err = err.fd()});
      in.close_read();
      out.close_write();
      EXPECT_TRUE(io::read_to_end(out.read_end(), got, 20s));
      exit = jail.wait(20s);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ASSERT_TRUE(exit) << got << err.contents();
    if (none) {
      EXPECT_TRUE(exit->exited_with(0)) << exit->text() << "\n" << got << err.contents();
      EXPECT_EQ(got, "/dev/null\ncat ended 0\n") << err.contents();
      EXPECT_LT(seconds, scaled(2.5)) << "end of file was not immediate";
    } else {
      // The control: the same tool on the open pipe waits until the timeout.
      EXPECT_TRUE(exit->exited_with(124)) << exit->text() << "\n" << got << err.contents();
      EXPECT_EQ(got.find("cat ended"), std::string::npos) << got;
    }
  }
}

// What a host hands jail as --log-fd: a file it opened (here a root-owned 0600 file, which the
// unprivileged caller could not open by name), a pipe, a socket.
enum class LogSink { file, pipe, socket };

TEST_P(IoOutput, LogFdKeepsJailsMessagesOffTheToolsStderr) {
  for (const LogSink kind : {LogSink::file, LogSink::pipe, LogSink::socket}) {
    SCOPED_TRACE(kind == LogSink::file ? "a file" : kind == LogSink::pipe ? "a pipe" : "a socket");
    ScratchFile file(cwd_ / "jail.log");
    int ends[2] = {-1, -1};  // [0] the test reads, [1] jail writes
    if (kind == LogSink::pipe) {
      ASSERT_EQ(::pipe2(ends, O_CLOEXEC | O_NONBLOCK), 0);
    }
    if (kind == LogSink::socket) {
      ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ends), 0);
    }
    const int log_fd = kind == LogSink::file ? file.fd() : ends[1];
    // -v and a timeout make jail say things; none of it may reach the tool's stderr.
    RunResult r = run(concat({{"-v", "--log-fd", "7", "--timeout", "1s", "--max-output", "1M"},
                              probe_mount(),
                              {"--", "sh", "-c", "/probes/list_fds; echo tool-err >&2; sleep 30"}}),
                      {.extra_fd = ExtraFd{log_fd, 7}});
    std::string logged = file.contents();
    if (kind != LogSink::file) {
      char buf[65536];
      for (ssize_t n; (n = ::read(ends[0], buf, sizeof buf)) > 0;) {
        logged.append(buf, static_cast<std::size_t>(n));
      }
      ::close(ends[0]);
      ::close(ends[1]);
    }
    EXPECT_EQ(r.exit_code, 124) << describe(r);
    EXPECT_EQ(r.out, "0 1 2\n") << "the log fd must not reach the tool\n" << describe(r);
    EXPECT_EQ(r.err, "tool-err\n") << describe(r);
    EXPECT_NE(logged.find("timeout"), std::string::npos) << "log:\n" << logged;
  }
}

TEST_P(IoOutput, LogFileKeepsJailsMessagesOffTheToolsStderr) {
  const std::string path = cwd_ / "jail-file.log";
  RunResult r = run({"-v", "--log-file", path, "--timeout", "1s", "--", "sh", "-c",
                     "echo tool-out; echo tool-err >&2; sleep 30"});
  EXPECT_EQ(r.exit_code, 124) << describe(r);
  EXPECT_EQ(r.out, "tool-out\n") << describe(r);
  EXPECT_EQ(r.err, "tool-err\n") << describe(r);
  const auto logged = read_file(path);
  ASSERT_TRUE(logged) << describe(r);
  EXPECT_NE(logged->find("timeout"), std::string::npos) << "log:\n" << *logged;
}

// What jail says while it reads its flags goes where its other messages go: -q, --log-file and
// --log-format applied only from the run on. A missing directory for the log is an error, not
// made, and --log-file with --log-fd is refused.
TEST_P(IoOutput, WarningsAboutFlagsFollowTheLogOptions) {
  const std::string flag_warning = "--pass-env JAIL_ITEST_UNSET";
  RunResult quiet = run({"-q", "--pass-env", "JAIL_ITEST_UNSET", "--", "true"});
  EXPECT_EQ(quiet.exit_code, 0) << describe(quiet);
  EXPECT_EQ(quiet.err, "") << describe(quiet);

  const std::string path = cwd_ / "flags.log";
  RunResult filed = run(
      {"--log-file", path, "--log-format", "json", "--pass-env", "JAIL_ITEST_UNSET", "--", "true"});
  EXPECT_EQ(filed.err, "") << describe(filed);
  const auto logged = read_file(path);
  ASSERT_TRUE(logged) << describe(filed);
  EXPECT_EQ(nlohmann::json::parse(split_lines(*logged).at(0)).value("level", ""), "warning")
      << *logged;
  EXPECT_NE(logged->find(flag_warning), std::string::npos) << *logged;

  const std::string missing = cwd_ / "no-such-dir/jail.log";
  RunResult nowhere = run({"--log-file", missing, "--", "true"});
  EXPECT_EQ(nowhere.exit_code, 125) << describe(nowhere);
  EXPECT_FALSE(std::filesystem::exists(cwd_ / "no-such-dir"));
  RunResult both = run({"--log-file", path, "--log-fd", "2", "--", "true"});
  EXPECT_EQ(both.exit_code, 125) << describe(both);
  EXPECT_NE(both.err.find("give one"), std::string::npos) << describe(both);
}

// The tool's last output, still in the relay when the tool ends, reaches a reader that is slow
// just then: jail waits for it as any writer of a pipe would, through --max-output's relay and
// through a terminal's.
TEST_P(IoOutput, TheToolsLastOutputWaitsForASlowReader) {
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  for (const std::string relay : {"--max-output 100M", "--tty always"}) {
    SCOPED_TRACE(relay);
    const std::string out = shell_output(
        as_caller + shell_quote(JAIL_BINARY) + " -q --no-cwd " + relay +
        " -- head -c 3000000 /dev/zero | (head -c 2900000 >/dev/null; sleep 2; wc -c)");
    EXPECT_EQ(trim(out), "100000");
  }
}

// `2>&1` through the relay: the caller reads stdout and stderr in the order the tool wrote them,
// as without it. Two pipes drained in turn gave all of stdout first.
TEST_P(IoOutput, StdoutAndStderrToOneDestinationKeepTheirOrder) {
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string out =
      shell_output(as_caller + shell_quote(JAIL_BINARY) +
                   " -q --no-cwd --max-output 1M -- sh -c 'for i in 1 2 3 4; do " +
                   "echo o$i; echo e$i >&2; done' </dev/null 2>&1 | cat");
  EXPECT_EQ(out, "o1\ne1\no2\ne2\no3\ne3\no4\ne4\n");
}

// A reader that goes away (`| head -1`) ends a tool that writes on, as it would without the
// relay: the tool gets EPIPE, and SIGPIPE. The relay used to drop what came after and let the tool
// run on — forever, for one that never stops — and then say it had been cut at --max-output.
TEST_P(IoOutput, AReaderThatGoesAwayEndsTheToolAsWithoutTheRelay) {
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string status_path = cwd_ / "status.json";
  const std::string out =
      shell_output("timeout -s KILL 20 " + as_caller + shell_quote(JAIL_BINARY) +
                   " -q --no-cwd --max-output 1G " + "--status-file " + status_path +
                   " -- sh -c 'while :; do echo x; sleep 0.05; done' </dev/null | head -1");
  EXPECT_EQ(trim(out), "x");
  const auto status = status_json(status_path);
  EXPECT_EQ(status.value("outcome", ""), "signaled") << status.dump();
  EXPECT_EQ(status.value("signal", 0), SIGPIPE) << status.dump();
  EXPECT_EQ(status.value("output_truncated", true), false) << status.dump();
  EXPECT_TRUE(status["limit_hit"].is_null()) << status.dump();
}

// A caller that writes to the tool's terminal faster than the tool reads, or reads its output
// slower than the tool writes, holds up neither the supervisor nor the timeout.
TEST_P(IoOutput, ATerminalRelayNeverHoldsUpTheTimeout) {
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const auto start = Clock::now();
  const std::string in =
      shell_output("yes | timeout -s KILL 30 " + as_caller + shell_quote(JAIL_BINARY) +
                   " -q --no-cwd --tty always --timeout 1s -- sleep 6; echo "
                   "rc=$?");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_NE(in.find("rc=124"), std::string::npos) << in;
  EXPECT_LT(seconds, scaled(5.0)) << in;

  const std::string status_path = cwd_ / "status.json";
  const std::string out = shell_output(
      as_caller + shell_quote(JAIL_BINARY) + " -q --no-cwd --tty always --timeout 1s " +
      "--status-file " + status_path + " -- yes | (sleep 6; head -c 1 >/dev/null)");
  const auto status = status_json(status_path);
  EXPECT_EQ(status.value("outcome", ""), "timeout") << status.dump() << out;
  EXPECT_LT(status.value("wall_ms", 1e9), scaled(3000.0)) << status.dump() << out;
}

JAIL_INSTANTIATE_FOR_CALLERS(IoOutput);

}  // namespace
}  // namespace jail_test
