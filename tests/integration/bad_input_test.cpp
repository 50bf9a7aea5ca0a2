// Bad input: exit code exactly 125 and one clear line on stderr starting "jail: " that names what
// failed; never a crash, never the tool started.
#include <gtest/gtest.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class BadInput : public CallerTest {
 protected:
  // Runs `args` and checks the setup-failure contract; `names` must appear in the message.
  void expect_setup_failure(const std::vector<std::string>& args, const std::string& names = "") {
    std::string shown;
    for (const std::string& a : args) shown += " '" + a + "'";
    SCOPED_TRACE("jail" + shown);
    RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_EQ(r.signal, 0) << describe(r);
    for (const char* crash : {"terminate called", "Aborted", "Segmentation", "what():"}) {
      EXPECT_EQ(r.err.find(crash), std::string::npos) << describe(r);
    }
    EXPECT_EQ(r.out.find("tool-ran"), std::string::npos) << "the tool ran\n" << describe(r);
    std::vector<std::string> lines;
    for (const std::string& line : split_lines(r.err)) {
      if (!trim(line).empty()) lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 1u) << "expected a one-line message\n" << describe(r);
    EXPECT_TRUE(lines[0].starts_with("jail: ")) << describe(r);
    EXPECT_GT(lines[0].size(), std::string("jail: ").size() + 10) << describe(r);
    if (!names.empty()) {
      EXPECT_NE(lines[0].find(names), std::string::npos)
          << "the message should name " << names << "\n"
          << describe(r);
    }
  }

  const std::vector<std::string> tool_ = {"sh", "-c", "echo tool-ran"};
};

TEST_P(BadInput, UnknownFlag) {
  expect_setup_failure(concat({{"--no-such-flag", "--"}, tool_}), "--no-such-flag");
  expect_setup_failure(concat({{"run", "--no-such-flag", "--"}, tool_}), "--no-such-flag");
  // A misspelt flag is named with the one meant, in jail's words, not CLI11's.
  expect_setup_failure(concat({{"--memroy", "1G", "--"}, tool_}),
                       "unknown flag --memroy (did you mean --memory?)");
}

TEST_P(BadInput, ValuesOutOfRangeSayWhy) {
  expect_setup_failure(concat({{"--memory", "0", "--"}, tool_}),
                       "--memory '0': must be more than 0");
  expect_setup_failure(concat({{"--uid", "99999999999", "--"}, tool_}),
                       "--uid '99999999999': not a value it takes");
}

TEST_P(BadInput, MissingDoubleDash) {
  expect_setup_failure({"sh", "-c", "echo tool-ran"}, "missing '--' before the command");
  // A subcommand spelt right was offered to itself: "'run' is not a subcommand (did you mean
  // run?)".
  for (const char* subcommand : {"run", "export-oci"}) {
    expect_setup_failure({subcommand, "sh", "-c", "echo tool-ran"},
                         "missing '--' before the command");
  }
  expect_setup_failure({"policy", "learn", "-o", "p", "sh"}, "missing '--' before the command");
  expect_setup_failure({"--hostname", "x", "sh", "-c", "echo tool-ran"});
}

// A misspelt subcommand was "missing '--'" (jail) or "A subcommand is required" (jail policy,
// jail rootfs), naming neither the word nor what was meant.
TEST_P(BadInput, AMisspeltSubcommandIsNamedWithTheNearestOne) {
  expect_setup_failure({"sesions"}, "'sesions' is not a subcommand (did you mean sessions?)");
  for (const auto& [args, named] :
       {std::pair{std::vector<std::string>{"policy", "expalin", "default"},
                  "'expalin' is not one of its subcommands (did you mean explain?)"},
        std::pair{std::vector<std::string>{"rootfs", "biuld", "out"},
                  "'biuld' is not one of its subcommands (did you mean build?)"},
        // Given none at all: the ones there are.
        std::pair{std::vector<std::string>{"rootfs"},
                  "jail rootfs: give one of its subcommands: build, check"},
        std::pair{std::vector<std::string>{"policy"},
                  "jail policy: give one of its subcommands: check"}}) {
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(named), std::string::npos) << describe(r);
  }
}

TEST_P(BadInput, EmptyCommand) {
  expect_setup_failure({"--"});
  expect_setup_failure({"run", "--"});
  expect_setup_failure({"--hostname", "x", "--"});
}

// A bare `jail` is someone finding out how to use it: said as that, with the way to --help.
TEST_P(BadInput, NoArgumentsAtAll) {
  expect_setup_failure({}, "no command given");
  expect_setup_failure({}, "jail --help");
}

// jail's own output files on a FIFO with no reader: the run waited for one before it started, in
// silence. Now the open fails at once and says so.
TEST_P(BadInput, AReportFileOnAFifoWithNoReaderIsRefusedAtOnce) {
  const std::string fifo = cwd_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(fifo.c_str(), 0666), 0);  // past the umask: either caller may open it
  for (const char* flag : {"--status-file", "--audit-log", "--log-file"}) {
    expect_setup_failure(concat({{flag, fifo, "--"}, tool_}), "a FIFO that no one reads yet");
  }
}

// Every subcommand answers a bad invocation with exit 2, as `jail policy` and `jail doctor` did;
// the others passed on CLI11's own codes (106 for a missing argument, 109 for an unknown option).
TEST_P(BadInput, SubcommandsAnswerABadInvocationWithTwo) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"changes"},
                                             {"commit"},
                                             {"undo"},
                                             {"discard"},
                                             {"sessions", "--bogus"},
                                             {"commit", "some-id", "--force=maybe"},
                                             {"rootfs"},
                                             {"rootfs", "build"},
                                             {"policy", "check"}}) {
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << describe(r);
    EXPECT_FALSE(r.err.empty()) << args.front() << ": " << describe(r);
  }
}

TEST_P(BadInput, BindSourceMissing) {
  const std::string missing = "/nonexistent/jail-itest-source";
  expect_setup_failure(concat({{"--bind", missing + ":/data", "--"}, tool_}), missing);
  expect_setup_failure(concat({{"--ro-bind", missing + ":/data", "--"}, tool_}), missing);
  expect_setup_failure(concat({{"--bind", missing, "--"}, tool_}), missing);
}

TEST_P(BadInput, BindTargetThroughSymlinkEscapingTheRoot) {
  // The cwd is bound into the jail; links in it point out of the jail's root.
  std::filesystem::create_directory_symlink("/root", cwd_ / "escape-abs");
  std::filesystem::create_directory_symlink("../../../../../../../../../root", cwd_ / "escape-rel");
  TempDir source;
  expect_setup_failure(
      concat({{"--bind", source.path() + ":" + (cwd_ / "escape-abs"), "--"}, tool_}));
  expect_setup_failure(concat(
      {{"--bind", source.path() + ":" + (cwd_ / "escape-rel") + "/jail-itest-sub", "--"}, tool_}));
  expect_setup_failure(concat(
      {{"--ro-bind", source.path() + ":" + (cwd_ / "escape-abs") + "/jail-itest-x", "--"}, tool_}));
  expect_setup_failure(concat(
      {{"--bind", source.path() + ":" + (cwd_ / "escape-rel") + "/jail-itest-x/y", "--"}, tool_}));
  expect_setup_failure(concat({{"--tmpfs", cwd_ / "escape-abs", "--"}, tool_}));
  // Nothing was created on the host through the links.
  for (const char* name : {"jail-itest-sub", "jail-itest-x"}) {
    EXPECT_FALSE(std::filesystem::exists(std::string("/root/") + name))
        << "created /root/" << name << " on the host";
  }
}

TEST_P(BadInput, RootfsMissing) {
  const std::string missing = "/nonexistent/jail-itest-rootfs";
  expect_setup_failure(concat({{"--rootfs", missing, "--"}, tool_}), missing);
}

TEST_P(BadInput, CwdMissing) {
  expect_setup_failure(concat({{"--cwd", "/nonexistent-jail-itest-cwd", "--"}, tool_}),
                       "/nonexistent-jail-itest-cwd");
}

TEST_P(BadInput, BadFlagValues) {
  expect_setup_failure(concat({{"--net", "bogus", "--"}, tool_}), "bogus");
  expect_setup_failure(concat({{"--uid", "abc", "--"}, tool_}));
  expect_setup_failure(concat({{"--gid", "-5", "--"}, tool_}));
  expect_setup_failure(concat({{"--log-format", "xml", "--"}, tool_}), "xml");
  expect_setup_failure(concat({{"--tmpfs-size", "lots", "--"}, tool_}));
  expect_setup_failure(concat({{"--env", "NO_EQUALS_SIGN", "--"}, tool_}));
  expect_setup_failure(concat({{"--uid", "--"}, tool_}));
}

// Values that used to be taken and then did something else: a negative count wrapped round
// (--pids -18446744073709551610 ran with 6), --pids 1 failed at the fork with a bare EAGAIN, a
// hostname with a line break added an entry to the jail's /etc/hosts, and a cgroup parent with
// '..' made jail mkdir outside the cgroup file system.
TEST_P(BadInput, ValuesThatMeantSomethingElse) {
  expect_setup_failure(concat({{"--pids=-18446744073709551610", "--"}, tool_}), "negative");
  expect_setup_failure(concat({{"--max-open-files=-5", "--"}, tool_}), "negative");
  // The least number of open files a run under a policy can start with is taken; one less is
  // refused by name (5 was taken, and the filter's install failed with a bare EMFILE).
  expect_setup_failure(concat({{"--max-open-files", "5", "--"}, tool_}), "at least 6");
  expect_setup_failure(concat({{"--rlimit", "nofile=5:100", "--"}, tool_}), "at least 6");
  const RunResult six = run(concat({{"--no-cwd", "--max-open-files", "6", "--"}, tool_}));
  EXPECT_EQ(six.exit_code, 0) << describe(six);
  expect_setup_failure(concat({{"--pids", "1", "--"}, tool_}), "at least 2");
  expect_setup_failure(concat({{"--memory", "4K", "--"}, tool_}), "at least 1M");
  expect_setup_failure(concat({{"--cpus", "0.001", "--"}, tool_}), "0.01");
  expect_setup_failure(concat({{"--tmpfs", "/dev", "--"}, tool_}), "the jail's own /dev");
  expect_setup_failure(concat({{"--ro-bind", "/proc:/proc", "--"}, tool_}), "own /proc");
  expect_setup_failure(concat({{"--hostname", "evil\n10.0.0.1 pypi.org", "--"}, tool_}),
                       "RFC 1123");
  expect_setup_failure(concat({{"--hostname", "a..b", "--"}, tool_}), "empty label");
  expect_setup_failure(concat({{"--hostname", std::string(64, 'x'), "--"}, tool_}),
                       "longer than 63");
  expect_setup_failure(concat({{"--hostname", "a.-b", "--"}, tool_}), "starts or ends with '-'");
  expect_setup_failure(concat({{"--cgroup-parent", "/../../tmp/x", "--"}, tool_}), "'..'");
  // Empty paths reached std::filesystem and came back as its exception's words.
  for (const char* bind : {"", ":/data", "/tmp:"}) {
    expect_setup_failure(concat({{"--bind", bind, "--"}, tool_}), "expected SRC[:DST]");
  }
  expect_setup_failure(concat({{"--rootfs", "", "--"}, tool_}), "expected a directory");
  // jail's stdin (/dev/null, read-only here) as the status fd: the JSON was lost after the run,
  // which then exited 0.
  expect_setup_failure(concat({{"--status-fd", "0", "--"}, tool_}), "not open for writing");
  // A parent that is not there, with no limit asked for: it ran, in no cgroup at all.
  expect_setup_failure(concat({{"--cgroup-parent", "/no-such-parent-of-jail", "--"}, tool_}),
                       "a wrong --cgroup-parent");
  // Numbers past what they count, or not whole, are named as such before anything starts (they
  // failed later with the kernel's bare EINVAL or ERANGE, or were cut: nproc=1.9 ran as 1).
  expect_setup_failure(concat({{"--memory", "99999999999G", "--"}, tool_}), "too large");
  expect_setup_failure(concat({{"--rlimit", "nproc=1.9", "--"}, tool_}), "not a whole number");
  expect_setup_failure(concat({{"--tmpfs-size", "0x10", "--"}, tool_}), "not a size");
  expect_setup_failure(concat({{"--max-file-size", "1e9", "--"}, tool_}), "not a size");
  expect_setup_failure(concat({{"--pids", "5000000", "--"}, tool_}), "at most 4194304");
  expect_setup_failure(concat({{"--uid", "4294967295", "--"}, tool_}), "not an id");
  // Messages that said something else than what was wrong: a file as --cwd "not accessible", a
  // hard limit above jail's own "only the host's root can raise" (to root, too).
  expect_setup_failure(concat({{"--rlimit", "nofile=unlimited", "--"}, tool_}),
                       "cannot be unlimited");
  expect_setup_failure(concat({{"--no-cwd", "--cwd", "/etc/passwd", "--"}, tool_}),
                       "it is not a directory");
  expect_setup_failure(concat({{"--no-cwd", "--rlimit", "nproc=5:unlimited", "--"}, tool_}),
                       "raise it before starting jail");
  // Flags that were taken and then ignored, or overridden with nothing said.
  expect_setup_failure(concat({{"--cpu-time", "10", "--rlimit", "cpu=20", "--"}, tool_}),
                       "set the same limit");
  expect_setup_failure(concat({{"--runsc-platform", "kvm", "--"}, tool_}),
                       "is for --runtime runsc");
  const RunResult grace = run(concat({{"--no-cwd", "--kill-grace", "1s", "--"}, tool_}));
  EXPECT_EQ(grace.exit_code, 0) << describe(grace);
  EXPECT_NE(grace.err.find("without --timeout it does nothing"), std::string::npos)
      << describe(grace);
  EXPECT_FALSE(std::filesystem::exists("/sys/fs/tmp/x"));
}

// The jail's own /proc, /sys and /dev are never replaced by the host's through the current
// directory: run from /proc, the tool saw every host process.
// Also the jail's own /tmp and /etc (the host's /tmp holds sockets a read-only bind still lets
// the tool connect to), and /run, where the host's services listen.
TEST_P(BadInput, CurrentDirectoryUnderProcSysOrDevIsRefused) {
  for (const char* dir : {"/proc", "/proc/self", "/sys", "/dev", "/tmp", "/etc", "/run"}) {
    SCOPED_TRACE(dir);
    RunOptions options;
    options.cwd = dir;
    const RunResult r = run(concat({{"--"}, tool_}), options);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_NE(r.err.find("--no-cwd"), std::string::npos) << describe(r);
    EXPECT_EQ(r.out.find("tool-ran"), std::string::npos) << describe(r);
  }
}

// A file bound where no file is, below a read-only directory, says EROFS with the way out (it
// said ENOENT, as if the source were missing).
TEST_P(BadInput, FileMountPointUnderReadOnlyDirectorySaysSo) {
  expect_setup_failure(
      concat({{"--no-cwd", "--ro-bind", "/etc/hostname:/usr/jail-itest-file", "--"}, tool_}),
      "Read-only file system");
}

// Mounts the kernel refuses said only EINVAL or ENOENT; each now says what is wrong with it.
TEST_P(BadInput, AMountThatCannotBeMadeSaysWhy) {
  expect_setup_failure(concat({{"--no-cwd", "--ro-bind", "/etc:/etc/passwd", "--"}, tool_}),
                       "the source is a directory and the target in the jail is not");
  expect_setup_failure(concat({{"--no-cwd", "--ro-bind", "/etc/hostname:/etc", "--"}, tool_}),
                       "the source is a file and the target in the jail is a directory");
  expect_setup_failure(concat({{"--no-cwd", "--ro-bind", "/etc:/proc/jail-itest", "--"}, tool_}),
                       "/proc is the jail's own procfs");
  expect_setup_failure(concat({{"--no-cwd", "--ro-bind", "/etc:/usr/jail-itest-dir", "--"}, tool_}),
                       "mount at a new path such as /data, or under /tmp");
}

// "/data/", as a shell completes it, is the destination /data.
TEST_P(BadInput, TrailingSlashesInDestinationsAreTheSamePath) {
  const RunResult r = run({"--no-cwd", "--ro-bind", "/usr/share/", "--ro-bind",
                           "/usr/share/doc:/data/", "--tmpfs", "/scratch/", "--", "sh", "-c",
                           "test -d /usr/share/doc && test -d /data/bash && touch /scratch/f && "
                           "echo ok"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "ok\n") << describe(r);
}

TEST_P(BadInput, FlagsAfterDoubleDashBelongToTheCommand) {
  RunResult r = run({"--", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 127) << describe(r);
}

TEST_P(BadInput, SetupErrorStatusNamesTheStep) {
  TempDir dir;
  std::string path = dir / "status.json";
  RunResult r = run(concat(
      {{"--status-file", path, "--bind", "/nonexistent/jail-itest-source:/d", "--"}, tool_}));
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  std::optional<std::string> text = read_file(path);
  ASSERT_TRUE(text) << "no status written\n" << describe(r);
  auto s = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_TRUE(s.is_object()) << *text;
  EXPECT_EQ(s.value("outcome", ""), "setup_error") << *text;
  ASSERT_TRUE(s["error"].is_object()) << *text;
  EXPECT_FALSE(s["error"].value("step", "").empty()) << *text;
  EXPECT_EQ(s["error"].value("errno_name", ""), "ENOENT") << *text;
  EXPECT_FALSE(s["error"].value("message", "").empty()) << *text;
}

TEST_P(BadInput, NetAllowIsRefusedWhereItCannotBeKept) {
  // Each would be a tool that reaches everything, or a flag silently dropped.
  expect_setup_failure(concat({{"--net", "host", "--net-allow", "example.org", "--"}, tool_}),
                       "--net-allow gives the tool its own network");
  expect_setup_failure(concat({{"--runtime", "runsc", "--net-allow", "example.org", "--"}, tool_}),
                       "--net-allow is not available with --runtime runsc");
  expect_setup_failure(concat({{"--net-allow-private", "--"}, tool_}), "--net-allow-private");
  expect_setup_failure(
      concat({{"--isolation", "landlock", "--net-allow", "example.org", "--"}, tool_}),
      GetParam() == Caller::root ? "Landlock mode" : "--net-allow");
  for (const char* entry : {"exa mple.org", "example.org:0", "example.org:65536", "-bad.org",
                            "10.0.0.0/33", "*.", "", "a..b", "[::1", "example.org:http"}) {
    expect_setup_failure(concat({{"--net-allow", entry, "--"}, tool_}), "--net-allow");
  }
}

JAIL_INSTANTIATE_FOR_CALLERS(BadInput);

// `jail --help` shows how a command is given and where the subcommands are (it said only
// "Usage: jail [OPTIONS]").
TEST(Help, TheUsageLineShowsTheCommandAndTheSubcommands) {
  RunResult help = run_jail({"--help"});
  EXPECT_EQ(help.exit_code, 0) << describe(help);
  EXPECT_NE(help.out.find("Usage: jail [OPTIONS] -- COMMAND [ARGS...]"), std::string::npos)
      << describe(help);
  EXPECT_NE(help.out.find("export-oci"), std::string::npos) << describe(help);
}

// A bug report or an audit starts from the version; `jail --version` was taken for a run
// without "--" (exit 125).
TEST(Help, VersionNamesJailsVersionAndTheLibseccompItLoaded) {
  RunResult version = run_jail({"--version"});
  EXPECT_EQ(version.exit_code, 0) << describe(version);
  EXPECT_TRUE(version.out.starts_with("jail 0.")) << describe(version);
  // The commit it was built from, as git names it (a build outside git says "unknown").
  std::string commit = "unknown";
  const std::string source = JAIL_SOURCE_DIR;
  if (std::filesystem::exists(source + "/.git")) {
    FILE* git = ::popen(("git -C '" + source + "' rev-parse --short=12 HEAD").c_str(), "r");
    ASSERT_NE(git, nullptr);
    char line[64] = {};
    if (std::fgets(line, sizeof line, git) != nullptr) commit = std::string(line, 12);
    ::pclose(git);
  }
  EXPECT_NE(version.out.find(" (commit " + commit), std::string::npos) << describe(version);
  const scmp_version* library = seccomp_version();
  const std::string loaded = "\nlibseccomp " + std::to_string(library->major) + "." +
                             std::to_string(library->minor) + "." + std::to_string(library->micro) +
                             " (API level ";
  EXPECT_NE(version.out.find(loaded), std::string::npos) << describe(version);
  EXPECT_TRUE(version.err.empty()) << describe(version);
  EXPECT_NE(run_jail({"--help"}).out.find("jail --version"), std::string::npos);
}

}  // namespace
}  // namespace jail_test
