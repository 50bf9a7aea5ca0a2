#include "dry_run_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace jail_test {

namespace fs = std::filesystem;

std::string fmt_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Tree snapshot(const std::string& root, bool mtimes) {
  Tree tree;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    struct stat info {};
    EXPECT_EQ(::lstat(it->path().c_str(), &info), 0) << it->path();
    const std::string relative = it->path().lexically_relative(root).string();
    const std::string mode =
        fmt_mode(info.st_mode) + (mtimes ? " mtime " + std::to_string(info.st_mtim.tv_sec) + "." +
                                               std::to_string(info.st_mtim.tv_nsec)
                                         : "");
    if (S_ISLNK(info.st_mode)) {
      tree[relative] = "symlink -> " + fs::read_symlink(it->path()).string();
    } else if (S_ISDIR(info.st_mode)) {
      tree[relative] = "dir " + mode;
    } else {
      tree[relative] = "file " + mode + " " + read_file(it->path()).value_or("<unreadable>");
    }
  }
  return tree;
}

void set_immutable(const std::string& path, bool on) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  int flags = 0;
  ASSERT_EQ(::ioctl(fd, FS_IOC_GETFLAGS, &flags), 0) << path;
  flags = on ? (flags | FS_IMMUTABLE_FL) : (flags & ~FS_IMMUTABLE_FL);
  ASSERT_EQ(::ioctl(fd, FS_IOC_SETFLAGS, &flags), 0) << path;
  ::close(fd);
}

void DryRun::SetUp() {
  project_ = cwd_ / "project";
  sessions_ = sessions_root_.path();
  // The caller's own and no one else's, as jail requires of a session directory.
  const uid_t owner = as_root() ? 0 : kNobodyUid;
  ASSERT_EQ(::chown(sessions_.c_str(), owner, owner == 0 ? 0 : kNobodyGid), 0);
  ASSERT_EQ(::chmod(sessions_.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(project_.c_str(), 0755), 0);
  ASSERT_EQ(::chown(project_.c_str(), kNobodyUid, kNobodyGid), 0);
  ASSERT_EQ(::mkdir((project_ + "/box").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/box").c_str(), kNobodyUid, kNobodyGid), 0);
  write_file(project_ + "/a.txt", "line1\nline2\n");
  write_file(project_ + "/keep.txt", "keep me\n");
  write_file(project_ + "/del.txt", "delete me\n");
  write_file(project_ + "/mode.txt", "mode\n", 0644);
  write_file(project_ + "/box/old1", "old one\n");
  write_file(project_ + "/box/old2", "old two\n");
  before_ = snapshot(project_);
}

RunResult DryRun::dry_run(const std::string& script) {
  return dry_run(script, {});
}

RunResult DryRun::dry_run(const std::string& script, std::vector<std::string> flags) {
  RunOptions options;
  options.cwd = project_;
  std::vector<std::string> args = {"--dry-run", "--session-dir", sessions_};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--", "sh", "-c", script});
  return run(args, options);
}

std::string DryRun::session_id() {
  std::vector<std::string> ids;
  for (const auto& entry : fs::directory_iterator(sessions_))
    ids.push_back(entry.path().filename());
  EXPECT_EQ(ids.size(), 1u);
  return ids.empty() ? "" : ids.front();
}

RunResult DryRun::session_command(std::vector<std::string> args) {
  args.insert(args.begin() + 2, {"--session-dir", sessions_});
  return run(args);
}

std::map<std::string, std::string> DryRun::changes_by_path(const std::string& id) {
  const RunResult r = session_command({"changes", id, "--json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::map<std::string, std::string> out;
  for (const auto& change : nlohmann::json::parse(r.out)) {
    out[change.at("relative").get<std::string>()] =
        change.at("kind").get<std::string>() + " " + change.at("type").get<std::string>();
  }
  return out;
}

}  // namespace jail_test
