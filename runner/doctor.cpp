// `jail doctor`: runs every check, prints one line per check (or one JSON object) and a verdict.
// The checks themselves live in doctor_<concern>.cpp; this file only orders, renders and judges.
#include "doctor.hpp"

#include <unistd.h>
#include <algorithm>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "subcommand_parse.hpp"

namespace jail::doctor {
namespace {

// Exit codes of `jail doctor`, as documented for run_doctor.
constexpr int kFullIsolation = 0;
constexpr int kSomethingMissing = 1;
// 2, bad options: parse_subcommand's, as every subcommand's.
static_assert(runner::kBadInvocationExit == 2);

enum class Format { text, json };

const char* need_word(Need need) {
  return need == Need::required ? "required" : "optional";
}

struct Verdict {
  bool landlock = false;  // no user namespace for this caller: the Landlock mode runs its tools
  std::vector<std::string> missing;      // required and missing: jail cannot fully isolate
  std::vector<std::string> limited;      // works with a restriction worth knowing
  std::vector<std::string> unavailable;  // optional extras this host lacks
  [[nodiscard]] bool full_isolation() const { return missing.empty(); }
  [[nodiscard]] int exit_code() const {
    return missing.empty() ? kFullIsolation : kSomethingMissing;
  }
};

Verdict judge(const std::vector<Check>& checks) {
  Verdict verdict;
  for (const Check& check : checks) {
    if (check.name == "user_namespaces" && check.facts.value("isolation", "") == "landlock")
      verdict.landlock = true;
    if (check.status == Status::missing) {
      (check.need == Need::required ? verdict.missing : verdict.unavailable).push_back(check.name);
    } else if (check.status == Status::limited) {
      verdict.limited.push_back(check.name);
    }
  }
  return verdict;
}

// What the caller can do here, in the order a user asks it: can jail run my tool, can it limit
// it. cgroups are required for full isolation but not for a run: without them only the limits
// (--memory, --pids, --cpus) are refused, and a plain `jail -- CMD` works.
std::string summary(const Verdict& verdict) {
  std::vector<std::string> blocking;
  for (const std::string& name : verdict.missing) {
    // What needs a user namespace does not stop the Landlock mode.
    const bool namespaced = name == "namespaces" || name == "mount_api";
    if (name != "cgroups" && !(verdict.landlock && namespaced)) blocking.push_back(name);
  }
  const bool cgroups_missing = verdict.missing.size() != blocking.size();
  const bool cgroups_limited =
      std::find(verdict.limited.begin(), verdict.limited.end(), "cgroups") != verdict.limited.end();
  std::string text;
  if (!blocking.empty()) {
    text = "runs: no — it needs " + join(blocking, ", ");
  } else if (verdict.landlock) {
    text = "runs: yes, in the Landlock mode (no user namespace here; docs/landlock.md)";
  } else {
    text = verdict.full_isolation() ? "runs: yes, with full isolation" : "runs: yes";
  }
  if (cgroups_missing) {
    text +=
        "; limits (--memory, --pids, --cpus): no — they need a cgroup delegated to this user "
        "(the cgroups line says which controllers are missing)";
  } else if (cgroups_limited) {
    text += "; limits: some (the cgroups line says which)";
  } else {
    text += "; limits: yes";
  }
  std::vector<std::string> limited;
  for (const std::string& name : verdict.limited) {
    if (name != "cgroups") limited.push_back(name);
  }
  if (!limited.empty()) text += "; limited: " + join(limited, ", ");
  if (!verdict.unavailable.empty()) text += "; not available: " + join(verdict.unavailable, ", ");
  return text;
}

void print_text(const std::vector<Check>& checks, const Verdict& verdict) {
  std::cout << fmt::format("jail doctor (uid {})\n", geteuid());
  for (const Check& check : checks) {
    std::cout << fmt::format("{:<8} {:<16} {} — {}\n", status_word(check.status), check.name,
                             check.finding, check.meaning);
  }
  std::cout << fmt::format("verdict: {}\n", summary(verdict));
}

void print_json(const std::vector<Check>& checks, const Verdict& verdict) {
  nlohmann::ordered_json report;
  report["uid"] = geteuid();
  for (const Check& check : checks) {
    nlohmann::ordered_json entry;
    entry["status"] = status_word(check.status);
    entry["need"] = need_word(check.need);
    entry["finding"] = check.finding;
    entry["meaning"] = check.meaning;
    for (const auto& [key, value] : check.facts.items()) entry[key] = value;
    report[check.name] = entry;
  }
  report["verdict"] = {{"full_isolation", verdict.full_isolation()},
                       {"exit_code", verdict.exit_code()},
                       {"missing", verdict.missing},
                       {"limited", verdict.limited},
                       {"not_available", verdict.unavailable},
                       {"summary", summary(verdict)}};
  std::cout << report.dump(2) << '\n';
}

}  // namespace

const char* status_word(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::limited:
      return "limited";
    case Status::missing:
      return "missing";
  }
  return "missing";
}

std::string read_text_file(const std::string& path, bool* ok) {
  std::ifstream in(path);
  if (ok != nullptr) *ok = static_cast<bool>(in);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += sep;
    text += word;
  }
  return text;
}

}  // namespace jail::doctor

int run_doctor(int argc, char** argv) {
  using namespace jail::doctor;
  CLI::App app{"Report what this host supports and what that means for jail.", "jail doctor"};
  std::string format_name = "text";
  app.add_option("--format", format_name, "Output format: text (one line per check) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  // Help exits 0, any bad option 2.
  if (const auto exit = jail::runner::parse_subcommand(app, argc, argv)) return *exit;
  const Format format = format_name == "json" ? Format::json : Format::text;

  // Fixed order: the kernel first, then what jail cannot run without, then the extras.
  std::vector<Check> checks;
  checks.push_back(check_kernel());
  checks.push_back(check_user_namespaces());
  checks.push_back(check_namespaces());
  checks.push_back(check_cgroups());
  checks.push_back(check_seccomp());
  checks.push_back(check_mount_api());
  checks.push_back(check_openat2());
  checks.push_back(check_landlock());
  checks.push_back(check_runsc());
  checks.push_back(check_benchmark_tools());
  checks.push_back(check_kvm());

  const Verdict verdict = judge(checks);
  if (format == Format::json) {
    print_json(checks, verdict);
  } else {
    print_text(checks, verdict);
  }
  return verdict.exit_code();
}
