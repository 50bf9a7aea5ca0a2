// `jail rootfs check` end to end, through the real binary, as root and as an unprivileged caller:
// a root that lacks what the command needs names exactly that, with the recipe line that adds
// it; a root that has everything reports nothing missing and exits 0; bad input exits 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "../integration/run_jail.hpp"

namespace {

namespace fs = std::filesystem;
using jail_test::describe;
using jail_test::RunResult;

// The entries of the report's "missing from OUT, present on the host" section: the lines that
// name a host path (each is followed by an indented "add: …" line, kept apart).
struct MissingSection {
  std::vector<std::string> paths;
  std::vector<std::string> recipe_lines;
  std::vector<std::string> merged_lines;  // "all of them as recipe lines:"
};

MissingSection missing_section(const std::string& report) {
  MissingSection section;
  bool inside = false, merged = false;
  for (const auto& line : jail_test::split_lines(report)) {
    if (line.starts_with("missing from ") &&
        line.find("present on the host") != std::string::npos) {
      inside = true;
    } else if (inside && line == "all of them as recipe lines:") {
      merged = true;
    } else if (merged && line.starts_with("  ")) {
      section.merged_lines.push_back(line.substr(2));
    } else if (inside && !merged && line.starts_with("      add: ")) {
      section.recipe_lines.push_back(line.substr(11));
    } else if (inside && line.starts_with("  /")) {
      section.paths.push_back(line.substr(2, line.find("  (", 2) - 2));
    } else {
      inside = merged = false;
    }
  }
  return section;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

class RootfsCheck : public jail_test::CallerTest {
 protected:
  // A probe copied into cwd_ (under /var/tmp): `rootfs build` refuses a binary under /tmp, where
  // a build directory may be, since the jail mounts its own /tmp over it.
  std::string probe_copy(const std::string& name) const {
    const std::string copy = cwd_ / name;
    fs::copy_file(std::string(JAIL_ROOTFS_PROBE_DIR) + "/" + name, copy);
    return copy;
  }
  // Built by root (the builder keeps host ownership); read by either caller.
  std::string build(const std::string& recipe) {
    const std::string root = cwd_ / ("root-" + recipe);
    const RunResult built = jail_test::run_jail({"rootfs", "build", root, "--recipe", recipe});
    EXPECT_EQ(built.exit_code, 0) << describe(built);
    return root;
  }
};

TEST_P(RootfsCheck, AMissingBinaryAndDataFileAreNamedWithTheirRecipeLines) {
  const std::string root = build("shell");
  const std::string data = cwd_ / "data.txt";
  jail_test::write_file(data, "some data\n");
  // seq is not in the shell recipe; the data file is only on the host, read by a path relative
  // to the working directory; wc is in the root and must not be named.
  const RunResult r = run({"rootfs", "check", root, "--", "sh", "-c",
                           "seq 2; cd /usr && cat .." + data + "; echo hi | wc -l"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  const MissingSection missing = missing_section(r.out);  // sorted by host path
  EXPECT_EQ(missing.paths, (std::vector<std::string>{"/usr/bin/seq", data})) << describe(r);
  EXPECT_EQ(missing.recipe_lines, (std::vector<std::string>{"binaries = [\"/usr/bin/seq\"]",
                                                            "files = [\"" + data + "\"]"}))
      << describe(r);
  // The tool ran to its end (wc in the root printed 1, before the report) and its status is
  // reported.
  EXPECT_TRUE(r.out.starts_with("1\n")) << describe(r);
  EXPECT_NE(r.out.find("exited with 0"), std::string::npos) << describe(r);
}

TEST_P(RootfsCheck, ACompleteRootReportsNothingMissingAndExitsZero) {
  const std::string root = build("shell");
  const RunResult r = run({"rootfs", "check", root, "--", "sh", "-c", "echo hi | wc -l"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("nothing it needs is missing from " + root), std::string::npos)
      << describe(r);
  EXPECT_TRUE(missing_section(r.out).paths.empty()) << describe(r);
  // Not vacuous: the shell's lookup of wc was seen and found in the root.
  std::smatch counts;
  ASSERT_TRUE(std::regex_search(r.out, counts,
                                std::regex(R"(it looked up (\d+) paths in the root: (\d+) there)")))
      << describe(r);
  EXPECT_GE(std::stoi(counts[2]), 1) << describe(r);
}

TEST_P(RootfsCheck, ALibraryAnExtensionModuleLoadsIsNamed) {
  const std::string root = build("python3");
  for (const auto& entry : fs::directory_iterator(root + "/usr/lib/x86_64-linux-gnu")) {
    if (entry.path().filename().string().starts_with("libsqlite3.so")) fs::remove(entry.path());
  }
  const RunResult r = run({"rootfs", "check", root, "--", "python3", "-c", "import sqlite3"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("python3 -c 'import sqlite3' exited with 1"), std::string::npos)
      << describe(r);
  const MissingSection missing = missing_section(r.out);
  const auto line = std::find(missing.recipe_lines.begin(), missing.recipe_lines.end(),
                              "libraries = [\"libsqlite3.so.0\"]");
  EXPECT_NE(line, missing.recipe_lines.end()) << describe(r);
}

// glibc's lstat() is newfstatat(…, AT_SYMLINK_NOFOLLOW), `test -L` and `stat` use statx with
// it, realpath-like code opens with O_PATH|O_NOFOLLOW: each looks at the link, not its target.
TEST_P(RootfsCheck, ALookupThatStopsAtTheFinalLinkNeedsOnlyTheLink) {
  const std::string probe = probe_copy("nofollow_lookups");
  const std::string root = cwd_ / "root";
  const RunResult built = jail_test::run_jail({"rootfs", "build", root, "--binary", probe});
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  // The same links on the host and in the root, to a file only the host has.
  const std::string target = cwd_ / "target";
  const std::string links = cwd_ / "links";
  jail_test::write_file(target, "on the host only\n");
  fs::create_directories(links);
  fs::create_directories(root + links);
  const std::vector<std::string> names = {
      "lstat",      "newfstatat",      "statx", "faccessat2",     "readlink",
      "readlinkat", "execveat",        "open",  "openat",         "openat-excl",
      "openat2",    "openat2-resolve", "stat",  "lstat-then-stat"};
  for (const auto& name : names) {
    fs::create_symlink(target, links + "/" + name);
    fs::create_symlink(target, root + links + "/" + name);
  }
  const RunResult r = run({"rootfs", "check", root, "--", probe, links});
  EXPECT_TRUE(r.out.starts_with("done\n")) << describe(r);
  // Only stat() went on to the target, also where lstat() had looked at the same link first;
  // every other lookup found its link in the root.
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(missing_section(r.out).paths, std::vector<std::string>{target}) << describe(r);
  EXPECT_NE(r.out.find("  " + target + "  (stat " + links + "/stat, stat " + links +
                       "/lstat-then-stat)\n"),
            std::string::npos)
      << describe(r);
}

// `cp -p`, `tar x` and `install` set times, owners and modes by path: each such call is a lookup
// the root must answer. Their fd forms (futimens, AT_EMPTY_PATH) look nothing up and must not be
// counted as paths that could not be read.
TEST_P(RootfsCheck, CallsThatChangeAFilesTimesOwnerOrModeAreLookups) {
  const std::string probe = probe_copy("metadata_lookups");
  const std::string root = cwd_ / "root";
  const RunResult built = jail_test::run_jail({"rootfs", "build", root, "--binary", probe});
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  const std::string dir = cwd_ / "files";
  fs::create_directories(dir);
  std::vector<std::string> expected;
  for (const std::string name : {"chmod", "chown", "fchmodat", "fchmodat2", "fchownat", "futimesat",
                                 "lchown", "truncate", "utime", "utimensat", "utimes"}) {
    jail_test::write_file(dir + "/" + name, "on the host only\n");
    expected.push_back(dir + "/" + name);
  }
  const RunResult r = run({"rootfs", "check", root, "--", probe, dir});
  EXPECT_TRUE(r.out.starts_with("done\n")) << describe(r);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  std::vector<std::string> missing = missing_section(r.out).paths;
  std::sort(missing.begin(), missing.end());
  EXPECT_EQ(missing, expected) << describe(r);
  for (const std::string name : {"utimensat", "fchownat", "fchmodat2", "lchown"}) {
    EXPECT_NE(r.out.find("  " + dir + "/" + name + "  (" + name + " "), std::string::npos)
        << name << "\n"
        << describe(r);
  }
  EXPECT_EQ(r.out.find("not checked:"), std::string::npos) << describe(r);
}

// The lines check suggests are what the next build needs: with them added, the same command
// finds everything. Here through symlinks, as on the host: a file link (/etc/os-release ->
// ../usr/lib/os-release), a link inside a directory (/usr/share/zoneinfo/UTC -> Etc/UTC) and a
// link to a directory the tool reads from.
TEST_P(RootfsCheck, ARootRebuiltWithTheSuggestedLinesLacksNothing) {
  const std::string host = cwd_ / "host";
  fs::create_directories(host + "/lib");
  fs::create_directories(host + "/zoneinfo/Etc");
  fs::create_directories(host + "/share/tree");
  jail_test::write_file(host + "/lib/os-release", "ID=jail\n");
  fs::create_symlink("host/lib/os-release", cwd_ / "os-release");
  jail_test::write_file(host + "/zoneinfo/Etc/UTC", "TZif\n");
  fs::create_symlink("Etc/UTC", host + "/zoneinfo/UTC");
  jail_test::write_file(host + "/share/tree/a", "a\n");
  jail_test::write_file(host + "/share/tree/b", "b\n");
  fs::create_symlink(host + "/share/tree", host + "/tree");
  const std::vector<std::string> command = {
      "sh", "-c",
      "ls " + host + "/tree >/dev/null; cat " + (cwd_ / "os-release") + " " + host +
          "/zoneinfo/UTC " + host + "/tree/a " + host + "/tree/b"};

  const std::string first = build("shell");
  RunResult r = run(jail_test::concat({{"rootfs", "check", first, "--"}, command}));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  const MissingSection missing = missing_section(r.out);
  EXPECT_EQ(missing.paths.size(), 3u) << describe(r);
  // The tree stands for both files the tool read from it.
  EXPECT_NE(r.out.find("and 2 more missing paths below it"), std::string::npos) << describe(r);

  // The three `add:` lines are all `files` or `trees`; a TOML file takes each key once, so the
  // report joins them by key, and that block is the recipe used as it stands.
  ASSERT_EQ(missing.recipe_lines.size(), 3u) << describe(r);
  ASSERT_LT(missing.merged_lines.size(), 3u) << describe(r);
  const std::string recipe = joined(missing.merged_lines, "\n") + "\n";
  jail_test::write_file(cwd_ / "suggested.toml", recipe);
  const std::string second = cwd_ / "root-rebuilt";
  const RunResult built = jail_test::run_jail(
      {"rootfs", "build", second, "--recipe", "shell", "--recipe", cwd_ / "suggested.toml"});
  ASSERT_EQ(built.exit_code, 0) << describe(built) << recipe;
  r = run(jail_test::concat({{"rootfs", "check", second, "--"}, command}));
  EXPECT_EQ(r.exit_code, 0) << describe(r) << recipe;
  EXPECT_TRUE(r.out.starts_with("ID=jail\nTZif\na\nb\n")) << describe(r);
  EXPECT_NE(r.out.find("nothing it needs is missing from " + second), std::string::npos)
      << describe(r) << recipe;
}

// The kernel looks a script's interpreter up itself, unseen by the trace: a root without it fails
// the tool's execve with ENOENT (the shell says "not found", exit 127), and check names it
// rather than reporting nothing missing.
TEST_P(RootfsCheck, TheInterpreterOfAScriptTheToolRunsIsNamed) {
  const std::string root = build("shell");
  const std::string interpreter = cwd_ / "interpreter";
  fs::copy_file("/usr/bin/dash", interpreter);
  fs::create_directories(root + "/usr/local/bin");
  jail_test::write_file(root + "/usr/local/bin/greet", "#!" + interpreter + "\necho greeted\n",
                        0755);
  const std::vector<std::vector<std::string>> commands = {{"sh", "-c", "greet"},
                                                          {"/usr/local/bin/greet"}};
  for (const auto& command : commands) {
    const RunResult r = run(jail_test::concat({{"rootfs", "check", root, "--"}, command}));
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    const MissingSection missing = missing_section(r.out);
    EXPECT_EQ(missing.paths, std::vector<std::string>{interpreter}) << describe(r);
    EXPECT_EQ(missing.recipe_lines,
              std::vector<std::string>{"binaries = [\"" + interpreter + "\"]"})
        << describe(r);
    EXPECT_NE(r.out.find("(interpreter " + interpreter + ")"), std::string::npos) << describe(r);
  }
}

// The check runs as root, often, and sees what root sees: a path the tool looked up that only
// root can read on the host (/etc/shadow, root's 0600 file in a 0700 directory, a file others
// may not read) is never suggested, and one line says how many were left out and why.
TEST_P(RootfsCheck, APathOnlyRootCanReadIsNeverSuggested) {
  const std::string root = build("shell");
  const std::string secret_dir = cwd_ / "secretdir";
  fs::create_directories(secret_dir);
  std::ofstream(secret_dir + "/f") << "root's secret\n";
  fs::permissions(secret_dir + "/f", fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(secret_dir, fs::perms::owner_all);
  const std::string unshared = cwd_ / "unshared";
  jail_test::write_file(unshared, "its owner's only\n", 0600);
  const std::string shared = cwd_ / "shared";
  jail_test::write_file(shared, "anyone's\n");
  const RunResult r = run(
      {"rootfs", "check", root, "--", "cat", "/etc/shadow", secret_dir + "/f", unshared, shared});
  EXPECT_EQ(r.exit_code, 1) << describe(r);  // for the shared file
  const MissingSection missing = missing_section(r.out);
  EXPECT_EQ(missing.paths, std::vector<std::string>{shared}) << describe(r);
  EXPECT_EQ(missing.recipe_lines, std::vector<std::string>{"files = [\"" + shared + "\"]"})
      << describe(r);
  // Named nowhere but in the command line the report repeats.
  for (const auto& line : jail_test::split_lines(r.out)) {
    if (line.starts_with("jail rootfs check: cat ")) continue;
    for (const std::string& path : {std::string("/etc/shadow"), secret_dir, unshared})
      EXPECT_EQ(line.find(path), std::string::npos) << line << "\n" << describe(r);
  }
  // An unprivileged check cannot look into the 0700 directory: that file is absent to it.
  const int left_out = as_root() ? 3 : 2;
  EXPECT_NE(r.out.find("left out " + std::to_string(left_out) +
                       " paths it looked for that are on the host but only root can read there "
                       "(not readable by others, or in a directory others cannot search)"),
            std::string::npos)
      << describe(r);
}

// A path is the tool's text: a terminal escape sequence in one is shown, never sent raw, in the
// report's paths, its recipe lines (as a TOML escape, exact) and the command line it repeats.
TEST_P(RootfsCheck, ALookedUpPathIsPrintedEscaped) {
  const std::string root = build("shell");
  const std::string red = cwd_ / "\x1b[31mred";
  jail_test::write_file(red, "red\n");
  const RunResult r = run({"rootfs", "check", root, "--", "cat", red});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << describe(r);
  const std::string shown = cwd_ / "\\x1b[31mred";
  const MissingSection missing = missing_section(r.out);
  EXPECT_EQ(missing.paths, std::vector<std::string>{shown}) << describe(r);
  EXPECT_NE(r.out.find("  " + shown + "  (openat " + shown + ")\n"), std::string::npos)
      << describe(r);
  EXPECT_EQ(missing.recipe_lines,
            std::vector<std::string>{"files = [\"" + (cwd_ / "\\u001B[31mred") + "\"]"})
      << describe(r);
  EXPECT_NE(r.out.find("jail rootfs check: cat " + shown + " exited with 1"), std::string::npos)
      << describe(r);
}

// A name that is not UTF-8 at all: the status JSON carries it as {"hex": …} and the report
// prints it escaped (it made the status's JSON writer abort the whole check).
TEST_P(RootfsCheck, ALookedUpPathThatIsNotUtf8IsReported) {
  const std::string root = build("shell");
  const std::string odd = cwd_ / "odd\xff\xfename";
  jail_test::write_file(odd, "odd\n");
  const RunResult r = run({"rootfs", "check", root, "--", "cat", odd});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find(cwd_ / "odd\\xff\\xfename"), std::string::npos) << describe(r);
}

TEST_P(RootfsCheck, TheCommandItselfMissingIsNamed) {
  const std::string root = build("shell");
  const RunResult r = run({"rootfs", "check", root, "--", "seq", "2"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.out.find("seq 2 was not found in the root"), std::string::npos) << describe(r);
  EXPECT_EQ(missing_section(r.out).paths, std::vector<std::string>{"/usr/bin/seq"}) << describe(r);
}

TEST_P(RootfsCheck, TheStatusJsonListsTheLookups) {
  const std::string root = build("shell");
  const std::string status = cwd_ / "status.json";
  const RunResult r = run({"rootfs", "check", root, "--status-file", status, "--", "sh", "-c",
                           "cat /etc/jail-check-absent 2>/dev/null; exit 3"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);  // absent on the host too: ordinary probing
  EXPECT_NE(r.out.find("exited with 3"), std::string::npos) << describe(r);
  const auto text = jail_test::read_file(status);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(
      text->find(R"({"path":"/etc/jail-check-absent","syscall":"openat","final_link":"followed"})"),
      std::string::npos)
      << *text;
}

TEST_P(RootfsCheck, BadInputExitsTwoWithAReason) {
  const std::string root = build("shell");
  RunResult r = run({"rootfs", "check", cwd_ / "no-such-root", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << describe(r);

  r = run({"rootfs", "check", "/etc", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("/etc is not a root for jail --rootfs"), std::string::npos) << describe(r);

  r = run({"rootfs", "check", root, "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("missing '--'"), std::string::npos) << describe(r);

  r = run({"rootfs", "check", root, "--rootfs", "/", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("leave --rootfs out"), std::string::npos) << describe(r);

  r = run({"rootfs", "check", root, "--policy", "none", "--", "true"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("needs a seccomp policy"), std::string::npos) << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(RootfsCheck);

}  // namespace
