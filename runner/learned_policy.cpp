#include "learned_policy.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "learned_rules.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"

namespace jail::runner {
namespace {

namespace fs = std::filesystem;

std::string today() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

// $'...' (bash, zsh, ksh): the one shell quoting that can spell a control character in a line.
std::string ansi_c_quoted(const std::string& word) {
  std::string text = "$'";
  for (const char c : word) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || c == '\'') {
      text += '\\';
      text += c;
    } else if (c == '\n') {
      text += "\\n";
    } else if (c == '\t') {
      text += "\\t";
    } else if (is_control(byte)) {
      text += fmt::format("\\x{:02x}", byte);
    } else {
      text += c;
    }
  }
  return text + "'";
}

// As the loader (policies/src/lower.cpp) tells them apart: a target with a '/' or ending in
// ".policy" is a file, anything else a shipped policy's name.
bool names_a_file(std::string_view target) {
  return target.find('/') != std::string_view::npos || target.ends_with(".policy");
}

// `file` as an include written in `to`: relative when it can be. Only the directory is resolved,
// so an included symlink stays the name it was.
std::string include_path(const fs::path& file, const fs::path& to) {
  const fs::path resolved = fs::weakly_canonical(file.parent_path()) / file.filename();
  const fs::path relative = resolved.lexically_relative(to);
  const std::string text = relative.empty() ? resolved.string() : relative.string();
  // An include is a quoted string on one line, with no escapes.
  if (text.find('"') != std::string::npos || std::any_of(text.begin(), text.end(), [](char c) {
        return is_control(static_cast<unsigned char>(c));
      })) {
    throw std::runtime_error(fmt::format(
        "its include of {} cannot be written as a path from {}: the path has a '\"' or a "
        "control character; write the policy next to it",
        file.string(), to.string()));
  }
  return text;
}

// `text` (a policy in directory `from`) with every relative file include and `within` rewritten
// to reach the same file from directory `to`. A statement is one line; the keyword its first
// word.
std::string with_includes_moved(const std::string& text, const fs::path& from, const fs::path& to) {
  std::string moved;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? end : end - start + 1);
    start = end == std::string::npos ? text.size() : end + 1;
    const auto word = line.find_first_not_of(" \t\r");
    const auto open = line.find('"');
    const auto close = open == std::string::npos ? open : line.find('"', open + 1);
    const std::size_t keyword = word == std::string::npos               ? 0
                                : line.compare(word, 7, "include") == 0 ? 7
                                : line.compare(word, 6, "within") == 0  ? 6
                                                                        : 0;
    if (keyword != 0 && close != std::string::npos &&
        line.find_first_not_of(" \t\r", word + keyword) == open) {
      const std::string target = line.substr(open + 1, close - open - 1);
      if (names_a_file(target) && !fs::path(target).is_absolute()) {
        line.replace(open + 1, close - open - 1, include_path(from / target, to));
      }
    }
    moved += line;
  }
  return moved;
}

}  // namespace

std::string quoted_command(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) text += ' ';
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    const bool control = std::any_of(
        word.begin(), word.end(), [](char c) { return is_control(static_cast<unsigned char>(c)); });
    if (plain) {
      text += word;
    } else if (control) {
      text += ansi_c_quoted(word);
    } else {
      text += '\'';
      for (const char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
      text += '\'';
    }
  }
  return text;
}

std::string learned_policy_text(const std::vector<SyscallUse>& seen, const LearnOptions& options,
                                const LearnBase& base) {
  std::uint64_t calls = 0;
  for (const auto& use : seen) calls += use.count;
  const std::string failed =
      options.failed_run.empty()
          ? ""
          : fmt::format(
                "# WARNING: learned from a run that failed ({}). It may have stopped before "
                "doing what the\n# tool does; written anyway because of --allow-failed-run.\n",
                options.failed_run);
  return fmt::format(
      "# Learned by `jail policy learn` on {} from:\n#   {}\n# {}, {}. Review it before use: it "
      "allows what one run needed, widened by the\n# families named below (docs/policies.md), "
      "and never more than {} allows: `within`\n# refuses what that refuses, the same way.\n{}"
      "default {}\nwithin \"{}\"\n\n{}",
      today(), quoted_command(options.command),
      counted(seen.size(), "distinct syscall", "distinct syscalls"),
      counted(calls, "call", "calls"), base.policy.name, failed, options.default_action,
      base.written_as, learned_rules(seen, {.bound = &base.policy, .strict = options.strict}));
}

LearnBase load_learn_base(const std::string& name_or_path, const std::string& output_dir) {
  LearnBase base{policy::load_policy(name_or_path), name_or_path};
  if (names_a_file(name_or_path)) {
    base.written_as =
        include_path(fs::absolute(name_or_path), fs::weakly_canonical(fs::absolute(output_dir)));
  }
  return base;
}

std::optional<std::string> default_action_problem(const std::string& action) {
  if (std::any_of(action.begin(), action.end(),
                  [](char c) { return is_control(static_cast<unsigned char>(c)); })) {
    return "it has a control character; give one action, such as 'errno EPERM' or 'kill'";
  }
  const policy::LoadResult loaded =
      policy::try_parse_policy("default " + action + "\n", "--default");
  if (!loaded.policy) return policy::format(loaded.diagnostics);
  return std::nullopt;
}

MergeBase load_merge_base(const std::string& name_or_path, const std::string& output_dir) {
  MergeBase base{policy::load_policy(name_or_path), ""};
  for (const auto& source : base.policy.sources) {
    if (source.name == base.policy.name) base.text = source.text;
  }
  // A shipped policy includes shipped names only; a file's relative includes start from its
  // directory, which the output may not share.
  if (names_a_file(name_or_path)) {
    const fs::path from = fs::weakly_canonical(fs::absolute(name_or_path).parent_path());
    const fs::path to = fs::weakly_canonical(fs::absolute(output_dir));
    if (from != to) base.text = with_includes_moved(base.text, from, to);
  }
  return base;
}

std::string merge_into(const MergeBase& base, const std::vector<SyscallUse>& seen,
                       const LearnOptions& options) {
  const std::string rules = learned_rules(seen, {.bound = base.policy.within_policy.get(),
                                                 .already = &base.policy,
                                                 .strict = options.strict});
  if (rules.empty()) return base.text;
  return fmt::format(
      "# Widened by `jail policy learn --merge` on {} for:\n#   {}\n{}\n# --- the policy as it was "
      "---\n{}",
      today(), quoted_command(options.command), rules, base.text);
}

std::optional<std::string> load_problems(const std::string& text, const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  const policy::LoadResult loaded = policy::try_parse_policy(text, path, dir.empty() ? "." : dir);
  if (!loaded.policy) return policy::format(loaded.diagnostics);
  try {
    // As `jail policy check`: both ways a run may compile it.
    (void)policy::compile(*loaded.policy, policy::Routing::direct);
    (void)policy::compile(*loaded.policy, policy::Routing::notify);
  } catch (const policy::CompileError& error) {
    return error.what();
  }
  return std::nullopt;
}

}  // namespace jail::runner
