#include "plan_builder.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

namespace jail {
namespace {

// "/a/b" -> "a/b": the child resolves targets relative to the new root.
std::string relative(const std::string& absolute) {
  std::size_t start = absolute.find_first_not_of('/');
  return start == std::string::npos ? std::string{} : absolute.substr(start);
}

}  // namespace

const char* PlanBuilder::keep(std::string text) {
  return strings_.emplace_back(std::move(text)).c_str();
}

child::MountOp& PlanBuilder::add(child::OpKind kind, const std::string& target,
                                 const std::string& source, const std::string& origin) {
  descriptions_.push_back({source, target, origin});
  child::MountOp& op = ops_.emplace_back();
  op.kind = kind;
  op.target = keep(relative(target));
  return op;
}

void PlanBuilder::bind(const std::string& source, const std::string& target, bool read_only,
                       const std::string& origin, bool follow_symlinks) {
  child::MountOp& op = add(child::OpKind::bind, target, source, origin);
  op.source = keep(source);
  op.read_only = read_only;
  op.follow_symlinks = follow_symlinks;
  descriptions_.back().follow_symlinks = follow_symlinks;
  struct stat info {};
  // The mount point must match the source's type; a missing source is reported by the child
  // with its errno, so a guess of "directory" is harmless here.
  op.target_is_dir = ::stat(source.c_str(), &info) != 0 || S_ISDIR(info.st_mode);
}

void PlanBuilder::bind_of_caller(const std::string& source, const std::string& target,
                                 bool read_only, const std::string& origin, bool follow_symlinks) {
  bind(source, target, read_only, origin, follow_symlinks);
  ops_.back().idmap = true;
}

void PlanBuilder::overlay(const std::string& lower, const std::string& upper,
                          const std::string& work, const std::string& target,
                          const std::string& origin) {
  child::MountOp& op = add(child::OpKind::overlay, target, lower, origin);
  op.source = keep(lower);
  op.overlay_upper = keep(upper);
  op.overlay_work = keep(work);
  op.read_only = false;
  op.idmap = true;  // a dry run's layers are always the caller's directories
}

void PlanBuilder::optional_bind(const std::string& source, const std::string& target) {
  bind(source, target, true, kHostMinimalRootOrigin);
  ops_.back().optional = true;
}

void PlanBuilder::device(const std::string& name) {
  const std::string path = "/dev/" + name;
  bind(path, path, true, "the jail's /dev");
  ops_.back().allow_devices = true;
  ops_.back().allow_exec = false;
  ops_.back().target_is_dir = false;
}

void PlanBuilder::mask_file(const std::string& target, const std::string& origin) {
  bind("/dev/null", target, true, origin);
  ops_.back().allow_devices = true;
  ops_.back().allow_exec = false;
  ops_.back().target_is_dir = false;
}

void PlanBuilder::tmpfs(const std::string& target, std::uint64_t size_bytes, unsigned mode,
                        bool read_only, bool allow_exec, const std::string& origin) {
  child::MountOp& op = add(child::OpKind::tmpfs, target, "tmpfs", origin);
  op.tmpfs_size = keep(std::to_string(size_bytes));
  op.tmpfs_mode = keep(fmt::format("{:o}", mode));
  op.read_only = read_only;
  op.allow_exec = allow_exec;
}

void PlanBuilder::proc(const std::string& target) {
  child::MountOp& op = add(child::OpKind::proc, target, "proc", "the jail's /proc");
  op.read_only = false;
  op.allow_exec = false;
}

void PlanBuilder::devpts(const std::string& target) {
  child::MountOp& op = add(child::OpKind::devpts, target, "devpts", "the jail's pty");
  op.read_only = false;
  op.allow_exec = false;
}

void PlanBuilder::mkdir(const std::string& target) {
  add(child::OpKind::mkdir, target, "", "the jail's root");
}

void PlanBuilder::symlink(const std::string& target, const std::string& link_text) {
  child::MountOp& op = add(child::OpKind::symlink, target, link_text, "the jail's root");
  op.source = keep(link_text);
}

void PlanBuilder::file(const std::string& target, std::string contents) {
  child::MountOp& op = add(child::OpKind::file, target, "", "the jail's generated /etc");
  op.source_len = contents.size();
  op.source = keep(std::move(contents));
}

void PlanBuilder::set_argv(const std::vector<std::string>& argv) {
  argv_.clear();
  for (const auto& arg : argv) argv_.push_back(const_cast<char*>(keep(arg)));
  argv_.push_back(nullptr);
}

void PlanBuilder::set_envp(const std::vector<std::string>& env) {
  envp_.clear();
  plan_.path_env = nullptr;
  for (const auto& entry : env) {
    const char* kept = keep(entry);
    envp_.push_back(const_cast<char*>(kept));
    if (entry.starts_with("PATH=")) plan_.path_env = kept + 5;
  }
  envp_.push_back(nullptr);
}

void PlanBuilder::set_rlimits(std::vector<child::RlimitSetting> rlimits) {
  rlimits_ = std::move(rlimits);
}

void PlanBuilder::set_quotas(const std::vector<std::pair<std::string, std::string>>& quotas) {
  quotas_.clear();
  for (const auto& [path, value] : quotas)
    quotas_.push_back({keep(path), keep(value), value.size()});
}

child::Plan& PlanBuilder::finish() {
  plan_.quotas = quotas_.data();
  plan_.quota_count = quotas_.size();
  plan_.rlimits = rlimits_.data();
  plan_.rlimit_count = rlimits_.size();
  plan_.ops = ops_.data();
  plan_.op_count = ops_.size();
  plan_.argv = argv_.data();
  plan_.envp = envp_.data();
  return plan_;
}

}  // namespace jail
