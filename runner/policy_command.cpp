#include "policy_command.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "policy/capabilities.hpp"
#include "policy/compile.hpp"
#include "policy/diff.hpp"
#include "policy/diff_summary.hpp"
#include "policy/oci.hpp"
#include "policy/policy.hpp"
#include "policy/text_file.hpp"
#include "policy/tools.hpp"
#include "run_walls.hpp"
#include "subcommand_parse.hpp"

namespace jail::runner {
namespace {

namespace policy = jail::policy;

// parse + compile (both routings) + lint; every diagnostic printed, errors decide the exit.
int check(const std::vector<std::string>& files) {
  bool failed = false;
  for (const auto& file : files) {
    policy::LoadResult loaded = policy::try_load_policy(file);
    std::vector<policy::Diagnostic> diags = loaded.diagnostics;
    if (loaded.policy) {
      try {
        (void)policy::compile(*loaded.policy, policy::Routing::direct);
        (void)policy::compile(*loaded.policy, policy::Routing::notify);
      } catch (const policy::CompileError& e) {
        diags.push_back(policy::Diagnostic{policy::Severity::error,
                                           policy::SourceLocation{file, 0, 0}, e.what(), ""});
      }
      auto findings = policy::lint(*loaded.policy);
      diags.insert(diags.end(), findings.begin(), findings.end());
    }
    std::cerr << policy::format(diags);
    bool bad = policy::has_errors(diags);
    std::size_t warnings = 0;
    for (const auto& d : diags) warnings += d.severity == policy::Severity::warning ? 1 : 0;
    std::cout << file << ": " << (bad ? "FAILED" : "ok");
    if (warnings != 0)
      std::cout << " (" << warnings << " warning" << (warnings == 1 ? "" : "s") << ")";
    std::cout << "\n";
    failed = failed || bad;
  }
  return failed ? 1 : 0;
}

int explain(const std::string& file, const std::vector<std::string>& syscalls,
            const std::string& format, bool capabilities) {
  if (capabilities && !syscalls.empty()) {
    std::cerr << "jail policy explain: --capabilities answers for every syscall; name no "
                 "SYSCALL with it (or leave it out to see those syscalls' rules)\n";
    return 2;
  }
  policy::LoadResult loaded = policy::try_load_policy(file);
  if (!loaded.policy) {
    std::cerr << policy::format(loaded.diagnostics);
    return 1;
  }
  if (capabilities) {
    const policy::Capabilities answers = policy::capabilities(*loaded.policy);
    if (format == "json") {
      nlohmann::json j = policy::capabilities_json(answers);
      j["jail_blocks"] = run_walls_json();
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << policy::capabilities_text(answers) << "\n" << run_walls_text();
    }
    return 0;
  }
  try {
    if (format == "json") {
      std::cout << policy::explain_json(*loaded.policy, syscalls).dump(2) << "\n";
    } else {
      std::cout << policy::explain_text(*loaded.policy, syscalls);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "jail policy explain: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

int bpf(const std::string& file, const std::string& routing) {
  policy::LoadResult loaded = policy::try_load_policy(file);
  if (!loaded.policy) {
    std::cerr << policy::format(loaded.diagnostics);
    return 1;
  }
  try {
    auto prog = policy::compile(
        *loaded.policy, routing == "notify" ? policy::Routing::notify : policy::Routing::direct);
    std::cout << policy::disassemble(prog);
  } catch (const policy::CompileError& e) {
    std::cerr << file << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// Exit codes gate a review in CI: 0 when AFTER is not wider than BEFORE (the same or
// narrower), 1 when it allows or answers anything less strictly, 2 when a policy cannot be read.
// --summary changes what is printed, never the exit code.
int diff(const std::string& before_file, const std::string& after_file, const std::string& format,
         bool summary) {
  policy::LoadResult before = policy::try_load_policy(before_file);
  policy::LoadResult after = policy::try_load_policy(after_file);
  if (!before.policy || !after.policy) {
    std::cerr << policy::format(before.diagnostics) << policy::format(after.diagnostics);
    return 2;
  }
  policy::PolicyDiff d = policy::diff(*before.policy, *after.policy);
  if (summary) {
    if (format == "json")
      std::cout << policy::diff_summary_json(d).dump(2) << "\n";
    else
      std::cout << policy::diff_summary_text(d);
  } else if (format == "json") {
    std::cout << policy::diff_json(d).dump(2) << "\n";
  } else {
    const std::string text = policy::diff_text(d);
    // Nothing at all read as a command that did nothing; said on stderr, so that the output
    // stays empty for a script that tests it, as diff(1)'s does.
    if (text.empty()) std::cerr << "no differences: both decide every syscall alike\n";
    std::cout << text;
  }
  return d.wider() ? 1 : 0;
}

// Writes to `path`, or stdout when it is empty; false (with the reason on stderr) on failure.
bool write_output(const std::string& path, const std::string& text, std::string_view command) {
  if (path.empty()) {
    std::cout << text;
    return true;
  }
  errno = 0;
  std::ofstream out(path, std::ios::trunc);
  if (out) {
    out << text;
    out.close();
  }
  if (!out) {
    const int err = errno;
    std::cerr << "jail policy " << command << ": cannot write " << path
              << (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) << "\n";
    return false;
  }
  return true;
}

// A Docker/Podman profile or OCI linux.seccomp → policy text.
int import_profile(const std::string& file, const std::string& output, const std::string& kernel) {
  std::string why;
  const std::optional<std::string> profile = policy::read_text_file(file, why);
  if (!profile) {
    std::cerr << "jail policy import: cannot read " << file << ": " << why
              << " (the profile's JSON file, or an OCI config.json)\n";
    return 1;
  }
  try {
    policy::ImportTarget target;
    target.kernel_release = kernel;
    std::string text = policy::import_oci_seccomp(*profile, file, target);
    return write_output(output, text, "import") ? 0 : 1;
  } catch (const policy::ImportError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

// A policy's decisions → OCI linux.seccomp JSON: as libseccomp reads a profile (`oci`: runc,
// crun) or as gVisor's runsc does (`runsc`; see policy/oci.hpp for how the two differ).
int export_policy(const std::string& file, const std::string& format, const std::string& output) {
  policy::LoadResult loaded = policy::try_load_policy(file);
  if (!loaded.policy) {
    std::cerr << policy::format(loaded.diagnostics);
    return 1;
  }
  if (format == "runsc" && policy::ptrace_can_run(*loaded.policy)) {
    // As `jail --runtime runsc` refuses it (seccomp/oci_export.hpp).
    std::cerr << "jail policy export: " << file
              << " lets ptrace run, which gVisor (runsc) cannot hold a tool to: "
              << policy::kGvisorTracerBypass
              << "; put `kill ptrace` ahead of the rules that allow it, or export --format oci "
                 "for runc or crun\n";
    return 1;
  }
  try {
    const nlohmann::json profile = format == "runsc" ? policy::export_runsc_seccomp(*loaded.policy)
                                                     : policy::export_oci_seccomp(*loaded.policy);
    std::string text = profile.dump(2) + "\n";
    return write_output(output, text, "export") ? 0 : 1;
  } catch (const policy::ExportError& e) {
    std::cerr << "jail policy export: cannot express " << file << " in OCI seccomp: " << e.what()
              << "\n";
    return 1;
  }
}

}  // namespace

int run_policy_command(int argc, char** argv) {
  CLI::App app{"Read, check and explain seccomp policies", "jail policy"};
  app.require_subcommand(1);
  // `policy learn` runs a tool, so main hands it to the runner before this parser sees it.
  app.footer(
      "Also: jail policy learn -o OUT.policy [--base B | --merge OLD] [--strict] [OPTIONS] -- "
      "COMMAND...\n  run COMMAND and write a policy from the syscalls it made (see jail policy "
      "learn --help)");

  std::vector<std::string> check_files;
  auto* check_cmd =
      app.add_subcommand("check", "parse, compile and lint policies; exit 1 on errors");
  check_cmd->add_option("FILE", check_files, "policy file or shipped name")->required();

  std::string explain_file, format = "text";
  std::vector<std::string> explain_syscalls;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "which rule decides each syscall; --capabilities: what the tool may do, by category");
  explain_cmd->add_option("FILE", explain_file, "policy file or shipped name")->required();
  explain_cmd->add_option("SYSCALL", explain_syscalls, "only these syscalls");
  explain_cmd->add_option("--format", format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  bool explain_capabilities = false;
  explain_cmd->add_flag("--capabilities", explain_capabilities,
                        "what the tool may do by category (network, processes, files, …), "
                        "yes/no answers to a reviewer's questions, and what every jail run "
                        "blocks anyway");

  std::string bpf_file, routing = "direct";
  auto* bpf_cmd = app.add_subcommand("bpf", "the compiled BPF program, one instruction a line");
  bpf_cmd->add_option("FILE", bpf_file, "policy file or shipped name")->required();
  bpf_cmd->add_option("--routing", routing, "direct (actions in the filter) or notify (supervisor)")
      ->check(CLI::IsMember({"direct", "notify"}));

  std::string diff_before, diff_after, diff_format = "text";
  auto* diff_cmd = app.add_subcommand(
      "diff", "what AFTER allows or refuses that BEFORE did not; exit 1 when AFTER is wider");
  diff_cmd->add_option("BEFORE", diff_before, "policy file or shipped name")->required();
  diff_cmd->add_option("AFTER", diff_after, "policy file or shipped name")->required();
  diff_cmd->add_option("--format", diff_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  bool diff_summary = false;
  diff_cmd->add_flag("--summary", diff_summary,
                     "one line per category (network, processes, files, …), the dangerous "
                     "syscalls made wider named");

  std::string import_file, import_output, import_kernel;
  auto* import_cmd = app.add_subcommand(
      "import", "a Docker/Podman seccomp profile or OCI linux.seccomp (JSON) as a policy");
  import_cmd->add_option("FILE", import_file, "profile.json or an OCI config.json")->required();
  import_cmd->add_option("-o,--output", import_output, "write the policy here (default: stdout)");
  import_cmd->add_option("--kernel", import_kernel,
                         "resolve minKernel for this release (default: this host's)");

  std::string export_file, export_output, export_format = "oci";
  auto* export_cmd = app.add_subcommand(
      "export", "a policy's decisions as OCI linux.seccomp JSON (runc, crun, runsc)");
  export_cmd->add_option("FILE", export_file, "policy file or shipped name")->required();
  export_cmd
      ->add_option("--format", export_format,
                   "oci: as libseccomp reads it (runc, crun); runsc: as gVisor's runsc reads it")
      ->check(CLI::IsMember({"oci", "runsc"}));
  export_cmd->add_option("-o,--output", export_output, "write the JSON here (default: stdout)");

  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  if (*check_cmd) return check(check_files);
  if (*explain_cmd) return explain(explain_file, explain_syscalls, format, explain_capabilities);
  if (*bpf_cmd) return bpf(bpf_file, routing);
  if (*diff_cmd) return diff(diff_before, diff_after, diff_format, diff_summary);
  if (*import_cmd) return import_profile(import_file, import_output, import_kernel);
  if (*export_cmd) return export_policy(export_file, export_format, export_output);
  return 2;
}

}  // namespace jail::runner
