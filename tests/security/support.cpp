#include "support.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <sstream>

namespace jail_security {

std::string mode_name(const ::testing::TestParamInfo<Mode>& info) {
  std::string name = info.param.caller == Caller::root ? "root" : "unprivileged";
  return name + (info.param.runtime == Runtime::runsc ? "_runsc" : "_native");
}

std::string Outcome::value(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? std::string() : it->second;
}

std::string Outcome::outcome() const {
  if (!status.is_object() || !status.contains("outcome") || !status["outcome"].is_string()) {
    return "";
  }
  return status["outcome"].get<std::string>();
}

std::string Outcome::violation_syscall() const {
  if (!status.is_object() || !status.contains("violation") || !status["violation"].is_object()) {
    return "";
  }
  const auto& v = status["violation"];
  return v.contains("syscall") && v["syscall"].is_string() ? v["syscall"].get<std::string>() : "";
}

std::string Outcome::describe() const {
  std::ostringstream s;
  s << jail_test::describe(run) << "\n--- status ---\n"
    << (status.is_null() ? std::string("(none)") : status.dump()) << "\n";
  return s.str();
}

std::map<std::string, std::string> parse_values(const std::string& text) {
  std::map<std::string, std::string> values;
  for (const std::string& line : split_lines(text)) {
    auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

bool one_of(const std::string& value, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (value == a) return true;
  }
  return false;
}

std::vector<int> host_processes_with(const std::string& token) {
  std::vector<int> pids;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return pids;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int pid = std::atoi(e->d_name);
    if (pid == getpid()) continue;
    // read_file (rdbuf): a process reaped meanwhile reads as empty instead of throwing.
    const std::string cmdline =
        read_file(std::string("/proc/") + e->d_name + "/cmdline").value_or("");
    if (cmdline.find(token) != std::string::npos) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

std::string sec_probe(const std::string& name) {
  return "/probes/" + name;
}

std::vector<std::string> SecurityTest::full_args(const std::vector<std::string>& flags,
                                                 const std::vector<std::string>& command) {
  status_path_ = scratch_ / "status.json";
  ::unlink(status_path_.c_str());
  std::vector<std::string> args;
  if (runsc()) args = {"--runtime", "runsc"};
  args.insert(args.end(), {"--status-file", status_path_});
  for (const auto& a : probe_mount()) args.push_back(a);
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

RunOptions SecurityTest::with_caller(RunOptions options) {
  options.caller = GetParam().caller;
  if (options.cwd.empty()) options.cwd = cwd_.path();
  return options;
}

Outcome SecurityTest::jail(const std::vector<std::string>& flags,
                           const std::vector<std::string>& command, RunOptions options) {
  options = with_caller(options);
  Outcome o;
  o.run = run_jail(full_args(flags, command), options);
  if (auto text = read_file(status_path_)) {
    o.status = nlohmann::json::parse(*text, nullptr, false);
    if (o.status.is_discarded()) o.status = nullptr;
  }
  o.values = parse_values(o.run.out);
  return o;
}

std::unique_ptr<JailProcess> SecurityTest::start(const std::vector<std::string>& flags,
                                                 const std::vector<std::string>& command,
                                                 RunOptions options) {
  options = with_caller(options);
  return std::make_unique<JailProcess>(full_args(flags, command), options);
}

Outcome SecurityTest::finish(JailProcess& process, std::chrono::milliseconds timeout) {
  Outcome o;
  o.run = process.wait(timeout);
  if (auto text = read_file(status_path_)) {
    o.status = nlohmann::json::parse(*text, nullptr, false);
    if (o.status.is_discarded()) o.status = nullptr;
  }
  o.values = parse_values(o.run.out);
  return o;
}

void SecurityTest::row(const std::string& probe, const std::string& expected,
                       const std::string& observed, bool contained) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string mode = info != nullptr && info->value_param() != nullptr ? info->name() : probe;
  std::cout << "| " << probe << " | " << mode << " | " << expected << " | " << observed << " | "
            << (contained ? "contained" : "NOT CONTAINED") << " |" << std::endl;
  RecordProperty("probe", probe);
  RecordProperty("expected", expected);
  RecordProperty("observed", observed);
  RecordProperty("contained", contained ? "yes" : "no");
}

}  // namespace jail_security
