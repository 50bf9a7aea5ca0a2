// The syscall category table that `policy diff --summary` and `explain --capabilities` answer in.
#include <gtest/gtest.h>

#include "policy/categories.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

// A syscall the table does not hold would fall out of every summary unseen.
TEST(Categories, EveryKnownSyscallHasOne) {
  std::size_t listed = 0;
  for (const std::string& name : all_syscall_names())
    EXPECT_TRUE(category_of(name).has_value()) << name << " has no category";
  for (Category c : kCategories) listed += syscalls_in(c).size();
  EXPECT_EQ(listed, all_syscall_names().size());
}

TEST(Categories, ReviewersFindCallsWhereTheyLook) {
  const std::pair<const char*, Category> expected[] = {
      {"socket", Category::network},    {"connect", Category::network},
      {"clone", Category::processes},   {"execve", Category::processes},
      {"ptrace", Category::processes},  {"openat", Category::files},
      {"unlink", Category::files},      {"setuid", Category::privileges},
      {"capset", Category::privileges}, {"shmget", Category::ipc},
      {"socketpair", Category::ipc},    {"clock_settime", Category::time},
      {"mmap", Category::memory},       {"kill", Category::signals},
      {"bpf", Category::kernel},        {"init_module", Category::kernel},
      {"mount", Category::kernel},      {"unshare", Category::kernel},
      {"keyctl", Category::kernel},     {"reboot", Category::system},
      {"swapon", Category::system}};
  for (const auto& [name, category] : expected) EXPECT_EQ(category_of(name), category) << name;
  EXPECT_FALSE(category_of("wirte").has_value());
}

TEST(Categories, NamesForJsonAndForPeople) {
  EXPECT_EQ(to_string(Category::ipc), "ipc");
  EXPECT_EQ(title(Category::ipc), "IPC");
  EXPECT_EQ(to_string(Category::kernel), "kernel");
  EXPECT_EQ(title(Category::kernel), "kernel interfaces");
  EXPECT_EQ(title(Category::network), "network");
}

}  // namespace
}  // namespace jail::policy
