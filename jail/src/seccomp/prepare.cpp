#include "seccomp/prepare.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <array>
#include <cerrno>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "jail/error.hpp"
#include "jail/spec.hpp"
#include "policy/diagnostics.hpp"
#include "policy/evaluate.hpp"

namespace jail {
namespace {

struct NeededCall {
  int number;
  const char* name;
  const char* why;
};

// The filter is installed in the tool right before execve: these calls run under it.
constexpr std::array kNeeded = {
    NeededCall{SYS_execve, "execve", "to start the tool"},
    NeededCall{SYS_write, "write", "to report a failed start"},
    NeededCall{SYS_exit_group, "exit_group", "to end after a failed start"},
};

void check_needed_calls(const policy::Policy& policy, const std::string& name) {
  for (const NeededCall& call : kNeeded) {
    seccomp_data data{};
    data.nr = call.number;
    data.arch = AUDIT_ARCH_X86_64;
    const policy::Decision decision = policy::evaluate(policy, data);
    // Plain allow, not log: these run before the supervisor holds the listener, so a call routed
    // to it would wait for ever.
    if (decision.action.kind != policy::ActionKind::allow) {
      throw Error(
          "policy", EINVAL,
          fmt::format("policy {} must allow {} ({}) plainly (not log), which jail needs {}; it "
                      "decides '{}' at {}:{}",
                      name, call.name, call.number, call.why, policy::to_string(decision.action),
                      decision.where.file, decision.where.line));
    }
  }
}

}  // namespace

std::unique_ptr<PreparedPolicy> load_policy_for_run(const std::string& name_or_path) {
  if (name_or_path == kNoPolicy) {
    jail::log().warn(
        "--policy none: the tool runs WITHOUT a seccomp filter; every syscall the kernel "
        "offers is open to it, connects are not checked (a socket file in a bind is reachable), "
        "and a root caller's binds are not idmapped (the tool writes there as the jail's own "
        "host id). Use this only to debug a policy.");
    return nullptr;
  }
  auto prepared = std::make_unique<PreparedPolicy>();
  prepared->name = name_or_path;
  try {
    auto loaded = std::make_shared<policy::Policy>(policy::load_policy(name_or_path));
    check_needed_calls(*loaded, name_or_path);
    prepared->policy = std::move(loaded);
  } catch (const policy::PolicyError& error) {
    throw Error("policy", EINVAL,
                fmt::format("cannot use policy {}:\n{}", name_or_path,
                            policy::format(error.diagnostics())));
  }
  return prepared;
}

std::unique_ptr<PreparedPolicy> prepare_policy(const std::string& name_or_path,
                                               policy::Routing routing) {
  std::unique_ptr<PreparedPolicy> prepared = load_policy_for_run(name_or_path);
  if (prepared) compile_routed(*prepared, *prepared->policy, {}, routing);
  return prepared;
}

void compile_routed(PreparedPolicy& prepared, const policy::Policy& routed, std::string_view what,
                    policy::Routing routing) {
  try {
    prepared.program = policy::compile(routed, routing);
  } catch (const policy::CompileError& error) {
    throw Error("policy", EINVAL,
                what.empty()
                    ? fmt::format("cannot compile policy {}: {}", prepared.name, error.what())
                    : fmt::format("cannot compile policy {} with {} routed to the supervisor: {}",
                                  prepared.name, what, error.what()));
  }
  prepared.fprog = prepared.program.fprog();
}

std::unique_ptr<PreparedPolicy> prepare_learning_policy() {
  auto prepared = std::make_unique<PreparedPolicy>();
  prepared->name = "learn";
  try {
    prepared->policy = std::make_shared<policy::Policy>(policy::parse_policy(
        "# jail policy learn: allow and report everything\n"
        "# (what jail itself runs before the supervisor listens is plainly allowed)\n"
        "allow execve write exit exit_group\ndefault log\n",
        "learn.policy"));
  } catch (const std::exception& error) {
    throw Error("policy", EINVAL,
                fmt::format("cannot build the learning policy: {}", error.what()));
  }
  return prepared;
}

}  // namespace jail
