// OCI / Docker / Podman seccomp JSON → policy text. The output must decide every call as
// libseccomp decides it under the profile (read on x86_64, for this kernel, with no
// capabilities), with the jail's baseline in front; see oci.hpp for the rules of that reading.
#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "oci_conditions.hpp"
#include "policy/constants.hpp"
#include "policy/oci.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

namespace d = detail;
using nlohmann::json;

// The kernel takes up to 4095 (MAX_ERRNO), but libseccomp — which runc and crun load a profile
// with — refuses 4095 in a rule and as the default, so the container would not start.
constexpr int kMaxErrno = 4094;
constexpr std::size_t kLineWidth = 96;
// Docker and Podman name architectures as Go does (runtime.GOARCH); OCI uses libseccomp's.
constexpr std::array<std::string_view, 3> kNativeArch = {"amd64", "x86_64", "SCMP_ARCH_X86_64"};

bool is_native(std::string_view arch) {
  return std::find(kNativeArch.begin(), kNativeArch.end(), arch) != kNativeArch.end();
}

struct Entry {
  std::size_t index = 0;
  std::vector<std::string> names;
  Action action;
  std::string action_note;  // where the jail's action differs from the profile's wording
  d::Conjunction args;
  std::string comment;
  std::string resolved;           // why includes/excludes kept it, for the reader
  std::string libseccomp_action;  // the action as libseccomp tells actions apart (runtime_action)
};

class Importer {
 public:
  Importer(std::string_view text, std::string_view source, const ImportTarget& target)
      : text_(text), source_(source), caps_(target.capabilities), baseline_(target.baseline) {
    std::string release = target.kernel_release;
    if (release.empty()) {
      utsname u{};
      if (uname(&u) == 0) release = u.release;
    }
    kernel_text_ = release;
    kernel_ = version_of(release);
    // A release given that is not one (a typo of --kernel) would have every minKernel entry
    // taken as met.
    if (!target.kernel_release.empty() && !kernel_) {
      throw ImportError("kernel '" + target.kernel_release +
                        "' is not a release like 6.1 or 6.18.0-amd64: minKernel entries are "
                        "read against it");
    }
  }

  std::string run() {
    json root = parse();
    const json& profile = locate(root);
    read_defaults(profile);
    read_architectures(profile);
    read_entries(profile);
    resolve();
    return write();
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw ImportError(source_ + ": " + where + ": " + message);
  }

  // Every string of the profile ends up in the policy's text, most in comments: a line break in
  // one (an architecture's name, a comment) would start a line of its own — a rule — in the
  // output. Control characters are written as \xNN, but for an entry's line breaks.
  static void scrub(json& j, bool is_comment = false) {
    if (j.is_string()) {
      std::string out;
      for (const char c : j.get_ref<const std::string&>()) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 || byte == 0x7f) && !(is_comment && c == '\n')) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
        } else {
          out += c;
        }
      }
      j = out;
    } else if (j.is_object()) {
      // An entry's comment keeps its line breaks: write() makes each line a comment line.
      for (auto it = j.begin(); it != j.end(); ++it) scrub(it.value(), it.key() == "comment");
    } else if (j.is_array()) {
      for (auto& element : j) scrub(element);
    }
  }

  static std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  }

  json parse() const {
    try {
      json document = json::parse(text_);
      scrub(document);
      return document;
    } catch (const json::parse_error& e) {
      // e.byte is 1-based; the line and column come from the text, so the caret lines up.
      std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text_.size());
      // nlohmann points at the last character of the offending token; the caret goes under
      // its first, where the reader looks.
      if (end < text_.size() && text_[end] == '"' && end > 0) {
        std::size_t open = text_.rfind('"', end - 1);
        if (open != std::string_view::npos &&
            text_.substr(open, end - open).find('\n') == std::string_view::npos)
          end = open;
      } else {
        auto word = [&](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
        while (end > 0 && end < text_.size() && word(text_[end]) && word(text_[end - 1])) --end;
      }
      int line = 1;
      std::size_t line_start = 0;
      for (std::size_t i = 0; i < end; ++i) {
        if (text_[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
      }
      std::size_t line_end = text_.find('\n', line_start);
      std::string what = e.what();
      auto column_at = what.find("column ");
      auto rest = column_at == std::string::npos ? std::string::npos : what.find(": ", column_at);
      std::string reason = rest == std::string::npos ? what : what.substr(rest + 2);
      Diagnostic diag{Severity::error,
                      SourceLocation{source_, line, static_cast<int>(end - line_start) + 1},
                      "invalid JSON: " + reason,
                      std::string(text_.substr(line_start, line_end == std::string::npos
                                                               ? std::string::npos
                                                               : line_end - line_start))};
      std::string msg = format(diag);
      if (!msg.empty() && msg.back() == '\n') msg.pop_back();
      throw ImportError(msg);
    } catch (const json::exception& e) {
      // Valid syntax the parser still refuses, e.g. a number too large for any integer type
      // (found by fuzz/oci_import): an import error too, never a crash.
      throw ImportError(source_ + ": invalid JSON: " + e.what());
    }
  }

  const json& locate(const json& root) {
    if (!root.is_object()) fail("top level", "expected a JSON object");
    if (root.contains("linux")) {
      const json& section = root["linux"];
      if (!section.is_object() || !section.contains("seccomp") || !section["seccomp"].is_object())
        fail("linux", "an OCI config.json without a linux.seccomp object: nothing to import");
      from_config_ = true;
      return section["seccomp"];
    }
    if (!root.contains("defaultAction"))
      fail("top level",
           "not a seccomp profile: expected 'defaultAction' (a Docker/Podman profile or an OCI "
           "linux.seccomp object) or 'linux.seccomp' (an OCI config.json)");
    return root;
  }

  static std::optional<std::pair<int, int>> version_of(std::string_view s) {
    int major = 0, minor = 0;
    std::size_t i = 0;
    auto digits = [&](int& out) {
      std::size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') out = out * 10 + (s[i++] - '0');
      return i > start;
    };
    if (!digits(major)) return std::nullopt;
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (!digits(minor)) return std::nullopt;
    }
    return std::pair{major, minor};
  }

  static std::string json_string(const json& j) {
    return j.is_string() ? j.get<std::string>() : j.dump();
  }

  // where: the action's place; errno_where: its errno number's (defaultErrnoRet, errnoRet), so
  // that a bad number is not reported under the action that is fine.
  Action action_of(const json& name_j, const json* errno_ret, const std::string& where,
                   const std::string& errno_where, std::string& note) const {
    if (!name_j.is_string()) fail(where, "expected an action name such as \"SCMP_ACT_ERRNO\"");
    std::string name = name_j.get<std::string>();
    if (name == "SCMP_ACT_ALLOW") return Action{ActionKind::allow, 0};
    if (name == "SCMP_ACT_KILL_PROCESS") return Action{ActionKind::kill, 0};
    if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") {
      note = name + " kills one thread in libseccomp; the jail kills the whole process";
      return Action{ActionKind::kill, 0};
    }
    if (name == "SCMP_ACT_LOG") return Action{ActionKind::log, 0};
    if (name == "SCMP_ACT_TRAP") return Action{ActionKind::trap, 0};
    if (name == "SCMP_ACT_TRACE") {
      note =
          "SCMP_ACT_TRACE: no tracer is attached in the jail, and then the kernel fails the "
          "call with ENOSYS";
      return Action{ActionKind::errno_code, 38};
    }
    if (name == "SCMP_ACT_NOTIFY")
      fail(where,
           "SCMP_ACT_NOTIFY hands the call to a listener agent the profile does not describe; "
           "write the decision the agent would make as a rule instead");
    if (name == "SCMP_ACT_ERRNO") {
      long long value = 1;  // runc and crun use EPERM when errnoRet is absent
      if (errno_ret != nullptr && !errno_ret->is_null()) {
        if (!errno_ret->is_number_integer())
          fail(errno_where, "expected an errno number, not " + errno_ret->dump());
        value = errno_ret->get<long long>();
      }
      if (value < 1 || value > kMaxErrno)
        fail(errno_where,
             "errno " + std::to_string(value) + " is out of range 1 … " +
                 std::to_string(kMaxErrno) +
                 (value == 0 ? " (errno 0 fakes success; the policy language refuses it)" : ""));
      return Action{ActionKind::errno_code, static_cast<std::uint16_t>(value)};
    }
    fail(where, "unknown action '" + name +
                    "' (known: SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, SCMP_ACT_KILL, "
                    "SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, SCMP_ACT_LOG, SCMP_ACT_TRAP, "
                    "SCMP_ACT_TRACE)");
  }

  void read_defaults(const json& p) {
    if (!p.contains("defaultAction"))
      fail(from_config_ ? "linux.seccomp" : "top level",
           "no 'defaultAction': a profile says what happens to syscalls no entry names");
    source_default_ = json_string(p["defaultAction"]);
    const json* ret = p.contains("defaultErrnoRet") ? &p["defaultErrnoRet"] : nullptr;
    if (ret != nullptr && ret->is_number_integer())
      source_default_ += " (errno " + std::to_string(ret->get<long long>()) + ")";
    default_ =
        action_of(p["defaultAction"], ret, "defaultAction", "defaultErrnoRet", default_note_);
    default_libseccomp_ = runtime_action(p["defaultAction"], ret);
  }

  // An action as runc and crun hand it to libseccomp, which is what decides whether an entry is
  // "the default's" and skipped: KILL_THREAD is not KILL_PROCESS, TRACE is not ERRNO(ENOSYS),
  // though the jail answers each pair alike. An errno or trace number left out is EPERM.
  static std::string runtime_action(const json& action, const json* ret) {
    std::string name = action.is_string() ? action.get<std::string>() : std::string();
    if (name == "SCMP_ACT_KILL") name = "SCMP_ACT_KILL_THREAD";
    if (name == "SCMP_ACT_ERRNO" || name == "SCMP_ACT_TRACE") {
      const long long number =
          ret != nullptr && ret->is_number_integer() ? ret->get<long long>() : EPERM;
      name += ":" + std::to_string(number);
    }
    return name;
  }

  // The architectures runc and crun accept (libseccomp's names, as the runtime spec lists them);
  // they refuse a profile with any other, so an import must not quietly drop a misspelt one.
  static bool known_arch(std::string_view arch) {
    static constexpr std::array<std::string_view, 23> kKnown = {
        "X86",         "X86_64",   "X32",     "ARM",       "AARCH64", "LOONGARCH64",
        "M68K",        "MIPS",     "MIPS64",  "MIPS64N32", "MIPSEL",  "MIPSEL64",
        "MIPSEL64N32", "PPC",      "PPC64",   "PPC64LE",   "S390",    "S390X",
        "PARISC",      "PARISC64", "RISCV64", "SH",        "SHEB"};
    constexpr std::string_view kPrefix = "SCMP_ARCH_";
    if (is_native(arch)) return true;
    if (!arch.starts_with(kPrefix)) return false;
    arch.remove_prefix(kPrefix.size());
    return std::find(kKnown.begin(), kKnown.end(), arch) != kKnown.end();
  }

  void read_architectures(const json& p) {
    std::vector<std::string> arches;
    auto add = [&](const json& a, const std::string& where) {
      if (!a.is_string()) fail(where, "expected an architecture's name, not " + a.dump());
      const std::string& name = a.get_ref<const std::string&>();
      if (!known_arch(name))
        fail(where, "unknown architecture '" + name +
                        "' (libseccomp's names, such as SCMP_ARCH_X86_64, SCMP_ARCH_AARCH64; "
                        "runc and crun refuse the profile)");
      if (std::find(arches.begin(), arches.end(), name) == arches.end()) arches.push_back(name);
    };
    auto add_all = [&](const json& list, const std::string& where) {
      if (!list.is_array()) fail(where, "expected an array of architecture names");
      for (std::size_t i = 0; i < list.size(); ++i)
        add(list[i], where + "[" + std::to_string(i) + "]");
    };
    if (p.contains("architectures") && !p["architectures"].is_null())
      add_all(p["architectures"], "architectures");
    if (p.contains("archMap") && !p["archMap"].is_null()) {
      if (!p["archMap"].is_array()) fail("archMap", "expected an array");
      for (std::size_t i = 0; i < p["archMap"].size(); ++i) {
        const json& m = p["archMap"][i];
        const std::string where = "archMap[" + std::to_string(i) + "]";
        if (!m.is_object()) fail(where, "expected an object");
        if (m.contains("architecture")) add(m["architecture"], where + ".architecture");
        if (m.contains("subArchitectures") && !m["subArchitectures"].is_null())
          add_all(m["subArchitectures"], where + ".subArchitectures");
      }
    }
    for (const auto& a : arches)
      if (!is_native(a)) other_arches_.push_back(a);
  }

  std::uint64_t number(const json& j, const std::string& where) const {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_number_integer()) return static_cast<std::uint64_t>(j.get<std::int64_t>());
    fail(where, "expected an integer, not " + j.dump());
  }

  // Why includes/excludes leave the entry out for this target, or nothing when it applies.
  std::optional<std::string> left_out(const json& e, std::string& resolved) const {
    auto list = [](const json& obj, const char* key) {
      std::vector<std::string> out;
      if (obj.is_object() && obj.contains(key) && obj[key].is_array())
        for (const auto& v : obj[key])
          if (v.is_string()) out.push_back(v.get<std::string>());
      return out;
    };
    auto kernel_at_least = [&](const json& obj) -> std::optional<bool> {
      if (!obj.is_object() || !obj.contains("minKernel") || !obj["minKernel"].is_string())
        return std::nullopt;
      auto want = version_of(obj["minKernel"].get<std::string>());
      if (!want || !kernel_) return std::nullopt;
      return *kernel_ >= *want;
    };
    const json none = json::object();
    const json& inc = e.contains("includes") && e["includes"].is_object() ? e["includes"] : none;
    const json& exc = e.contains("excludes") && e["excludes"].is_object() ? e["excludes"] : none;
    for (const auto& a : list(exc, "arches"))
      if (is_native(a)) return "excluded on " + a;
    for (const auto& c : list(exc, "caps"))
      if (std::find(caps_.begin(), caps_.end(), c) != caps_.end()) return "excluded with " + c;
    if (kernel_at_least(exc).value_or(false))
      return "excluded from kernel " + exc["minKernel"].get<std::string>();
    auto arches = list(inc, "arches");
    if (!arches.empty() && std::none_of(arches.begin(), arches.end(), is_native))
      return "only for " + join(arches);
    for (const auto& c : list(inc, "caps"))
      if (std::find(caps_.begin(), caps_.end(), c) == caps_.end())
        return "needs " + c +
               (caps_.empty() ? " (the jail's tool has no capabilities)" : " (not held)");
    if (auto ok = kernel_at_least(inc); ok && !*ok)
      return "needs kernel " + inc["minKernel"].get<std::string>() + " (this one: " + kernel_text_ +
             ")";
    if (inc.contains("minKernel") && inc["minKernel"].is_string())
      resolved = "included for kernel " + inc["minKernel"].get<std::string>() + " and later";
    if (!arches.empty()) resolved += (resolved.empty() ? "" : "; ") + std::string("x86_64 only");
    return std::nullopt;
  }

  static std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
    return out;
  }

  void read_entries(const json& p) {
    if (!p.contains("syscalls") || p["syscalls"].is_null()) return;
    if (!p["syscalls"].is_array()) fail("syscalls", "expected an array");
    const json& all = p["syscalls"];
    for (std::size_t i = 0; i < all.size(); ++i) {
      const json& e = all[i];
      std::string where = "syscalls[" + std::to_string(i) + "]";
      if (!e.is_object()) fail(where, "expected an object");
      Entry entry;
      entry.index = i;
      if (e.contains("names") && e["names"].is_array()) {
        for (const auto& n : e["names"]) {
          if (!n.is_string()) fail(where + ".names", "expected syscall names, not " + n.dump());
          entry.names.push_back(n.get<std::string>());
        }
      }
      if (e.contains("name") && e["name"].is_string())
        entry.names.push_back(e["name"].get<std::string>());
      if (entry.names.empty()) fail(where, "an entry without 'names'");
      if (!e.contains("action")) fail(where, "an entry without 'action'");
      const json* ret = e.contains("errnoRet") ? &e["errnoRet"] : nullptr;
      entry.action =
          action_of(e["action"], ret, where + ".action", where + ".errnoRet", entry.action_note);
      entry.libseccomp_action = runtime_action(e["action"], ret);
      if (e.contains("comment") && e["comment"].is_string()) entry.comment = e["comment"];
      if (e.contains("args") && !e["args"].is_null()) {
        if (!e["args"].is_array()) fail(where + ".args", "expected an array");
        std::set<int> seen;
        for (std::size_t k = 0; k < e["args"].size(); ++k) {
          const json& a = e["args"][k];
          std::string at = where + ".args[" + std::to_string(k) + "]";
          if (!a.is_object() || !a.contains("index") || !a.contains("op"))
            fail(at, "expected {\"index\", \"value\", \"valueTwo\", \"op\"}");
          std::uint64_t index = number(a["index"], at + ".index");
          if (index > 5)
            fail(at + ".index", "a syscall has arguments 0 … 5, not " + std::to_string(index));
          auto op =
              a["op"].is_string() ? d::parse_oci_op(a["op"].get<std::string>()) : std::nullopt;
          if (!op)
            fail(at + ".op", "unknown comparison " + a["op"].dump() +
                                 " (known: SCMP_CMP_EQ, SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, "
                                 "SCMP_CMP_GT, SCMP_CMP_GE, SCMP_CMP_MASKED_EQ)");
          int arg = static_cast<int>(index);
          if (!seen.insert(arg).second)
            fail(at, "a second comparison of arg" + std::to_string(arg) +
                         " in one entry: libseccomp refuses that rule (EINVAL), and runtimes "
                         "work round it differently (runc adds one rule per comparison, so "
                         "either may match); say which is meant: one entry per comparison for "
                         "'either', or one comparison that says both");
          d::ArgCmp cmp =
              d::from_oci(arg, *op, a.contains("value") ? number(a["value"], at + ".value") : 0,
                          a.contains("valueTwo") ? number(a["valueTwo"], at + ".valueTwo") : 0);
          entry.args.push_back(cmp);
        }
      }
      if (auto why = left_out(e, entry.resolved)) {
        // The comment stays with the entry it explains, even when the entry drops out.
        left_out_.push_back(where + " (" + join(entry.names, " ") + "): " + *why +
                            (entry.comment.empty() ? "" : " — " + one_line(entry.comment)));
        continue;
      }
      entries_.push_back(std::move(entry));
    }
  }

  // The entry's condition as the jail evaluates it: 32-bit arguments on their low half.
  // How much an action refuses: a name that falls to a default that refuses less is a hole.
  static int strictness(const Action& action) {
    switch (action.kind) {
      case ActionKind::allow:
      case ActionKind::log:
        return 0;
      case ActionKind::errno_code:
      case ActionKind::trap:
        return 1;
      case ActionKind::kill:
        return 2;
    }
    return 2;
  }

  // `title` and the names, wrapped as comment lines; nothing when there are no names.
  static std::string name_list(const std::string& title, const std::vector<std::string>& names) {
    if (names.empty()) return "";
    std::string out, line = title;
    for (const auto& n : names) {
      if (line.size() + n.size() + 1 > kLineWidth) {
        out += line + "\n";
        line = "#  ";
      }
      line += " " + n;
    }
    return out + line + "\n";
  }

  static Condition jail_condition(const Entry& e, int nr) {
    Condition c;
    c.kind = Condition::Kind::all_of;
    for (const auto& a : e.args) {
      c.operands.push_back(
          d::to_condition(is_32bit_argument(nr, a.arg) ? d::narrowed_to_32_bits(a) : a));
    }
    return c;
  }

  // The baseline's rule for `nr` when it decides every call of it (clone3 → ENOSYS), read from
  // the baseline every policy loads first; nullptr otherwise.
  static const Rule* baseline_decides(int nr) {
    static const LoadResult bare = try_parse_policy("default allow\n", "bare.policy");
    if (!bare.policy) return nullptr;
    const std::vector<const Rule*> rules = bare.policy->rules_for(nr);
    return !rules.empty() && !rules.front()->condition ? rules.front() : nullptr;
  }

  void resolve() {
    // nr → the entries naming it, in profile order; per entry the names that take effect.
    std::map<int, std::vector<std::size_t>> by_nr;
    effective_.assign(entries_.size(), {});
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      for (const auto& name : entries_[i].names) {
        auto nr = syscall_number(name);
        if (!nr && !known_on_some_architecture(name)) {
          // Left out, the name falls to the default: harmless where the entry allows more than
          // the default does, a hole where it refuses what the default lets through.
          if (strictness(entries_[i].action) > strictness(default_)) {
            fail("syscalls[" + std::to_string(entries_[i].index) + "]",
                 "'" + name + "' is no system call on any architecture libseccomp knows (a typo, " +
                     "or one newer than this jail): left out, it would fall to the default " +
                     to_string(default_) + " instead of " + to_string(entries_[i].action) +
                     "; correct or remove the name");
          }
          if (std::find(unknown_.begin(), unknown_.end(), name) == unknown_.end())
            unknown_.push_back(name);
          continue;
        }
        if (!nr || *nr < 0) {
          if (std::find(not_native_.begin(), not_native_.end(), name) == not_native_.end())
            not_native_.push_back(name);
          continue;
        }
        for (const auto& a : entries_[i].args) {
          if (!is_32bit_argument(*nr, a.arg)) continue;
          if (std::string why = d::why_not_32_bits(a.op, a.value); !why.empty())
            fail("syscalls[" + std::to_string(entries_[i].index) + "]",
                 "args index " + std::to_string(a.arg) + " of " + name + ": " + why);
        }
        if (entries_[i].libseccomp_action == default_libseccomp_) {
          same_as_default_[i].push_back(name);
          continue;
        }
        if (const Rule* first = baseline_ == Baseline::first ? baseline_decides(*nr) : nullptr) {
          // A rule after it would never apply, and `jail policy check` would say so of the
          // import (Docker's and Podman's clone3 entry): kept as a comment instead.
          by_baseline_[i].push_back(name + " (the baseline: " + to_string(first->action) + ")");
          continue;
        }
        by_nr[*nr].push_back(i);
      }
    }
    for (const auto& [nr, list] : by_nr) {
      std::string name = syscall_name(nr);
      auto whole = std::find_if(list.begin(), list.end(),
                                [&](std::size_t i) { return entries_[i].args.empty(); });
      if (whole != list.end()) {
        effective_[*whole].insert(name);
        for (std::size_t i : list)
          if (i != *whole) overridden_[i].push_back({name, entries_[*whole].index});
        continue;
      }
      // Only conditional entries: libseccomp gives them no order, so entries with different
      // actions must never both match, or the profile's meaning is not defined.
      for (std::size_t a = 0; a < list.size(); ++a) {
        for (std::size_t b = a + 1; b < list.size(); ++b) {
          const Entry& x = entries_[list[a]];
          const Entry& y = entries_[list[b]];
          if (x.action == y.action) continue;
          auto both = d::conjoin(d::to_dnf(jail_condition(x, nr), false),
                                 d::to_dnf(jail_condition(y, nr), false));
          if (!both.empty())
            fail("syscalls[" + std::to_string(x.index) + "] and syscalls[" +
                     std::to_string(y.index) + "]",
                 "both match " + name + " when " + d::condition_text(both.front()) + " (" +
                     to_string(x.action) + " vs " + to_string(y.action) +
                     "); libseccomp does not order conditional rules, so the profile does not "
                     "say which wins");
        }
      }
      for (std::size_t i : list) effective_[i].insert(name);
    }
  }

  void wrap(std::string& out, const std::string& head, const std::vector<std::string>& names,
            const std::string& tail) const {
    std::string line = head;
    for (const auto& n : names) {
      if (line.size() + 1 + n.size() + tail.size() > kLineWidth && line != head) {
        out += line + tail + "\n";
        line = head;
      }
      line += " " + n;
    }
    out += line + tail + "\n";
  }

  // A long comment as `#` lines of at most kLineWidth, continuation lines indented.
  static std::string comment(const std::string& text) {
    std::string out, line = "#";
    std::size_t from = 0;
    while (from < text.size()) {
      std::size_t sp = text.find(' ', from);
      std::string word = text.substr(from, sp == std::string::npos ? sp : sp - from);
      from = sp == std::string::npos ? text.size() : sp + 1;
      if (line.size() + 1 + word.size() > kLineWidth && line != "#" && line != "#  ") {
        out += line + "\n";
        line = "#  ";
      }
      line += " " + word;
    }
    return out + line + "\n";
  }

  std::string write() const {
    std::string out;
    out += "# Imported from " + source_ + " by `jail policy import`";
    out += from_config_ ? " (linux.seccomp of an OCI config.json).\n" : ".\n";
    out += "# Read as libseccomp reads it on x86_64 (amd64), kernel " +
           (kernel_text_.empty() ? std::string("unknown") : kernel_text_) +
           (caps_.empty() ? ", with no capabilities (the jail's tool has none).\n"
                          : ", holding " + join(caps_) + ".\n");
    out += "# Source default: " + source_default_ + ".\n";
    if (!default_note_.empty()) out += "# " + default_note_ + ".\n";
    if (!other_arches_.empty())
      out += comment(
          "Other architectures in the source, not kept (jail runs native x86_64 only "
          "and kills foreign-architecture and x32 calls before any rule): " +
          join(other_arches_) + ".");
    out += baseline_ == Baseline::first
               ? "# The jail's baseline comes before these rules (clone3 → ENOSYS, namespace "
                 "flags → kill,\n# TIOCSTI → EPERM, …), and arguments the kernel reads as "
                 "32-bit ints are compared on their\n# low 32 bits, where libseccomp compares "
                 "all 64.\n"
               : "# Read without the jail's baseline, to be loaded as the source's runtime loads "
                 "it. Arguments\n# the kernel reads as 32-bit ints are compared on their low 32 "
                 "bits, where libseccomp\n# compares all 64.\n";
    for (const auto& l : left_out_) out += comment("Left out: " + l + ".");
    out += name_list("# Not x86_64 syscalls, left out:", not_native_);
    out += name_list(
        "# Unknown names, left out (they fall to the default, which refuses at least as much):",
        unknown_);
    out += "\ndefault " + to_string(default_) + "\n";
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      std::string tag = "syscalls[" + std::to_string(e.index) + "]";
      std::string block;
      if (!e.comment.empty()) {
        std::size_t from = 0;
        while (from <= e.comment.size()) {
          std::size_t nl = e.comment.find('\n', from);
          block += "# " + e.comment.substr(from, nl == std::string::npos ? nl : nl - from) + "\n";
          if (nl == std::string::npos) break;
          from = nl + 1;
        }
      }
      if (!e.action_note.empty()) block += comment(e.action_note + ".");
      if (!e.resolved.empty()) block += "# " + tag + ": " + e.resolved + ".\n";
      if (auto it = same_as_default_.find(i); it != same_as_default_.end())
        block += comment(tag + " (" + join(it->second, " ") +
                         ") has the default's action: libseccomp refuses such rules and runc "
                         "skips them.");
      if (auto it = by_baseline_.find(i); it != by_baseline_.end())
        block += comment(tag + " does not apply to " + join(it->second, ", ") +
                         ": the jail's baseline decides it first, without conditions.");
      if (auto it = overridden_.find(i); it != overridden_.end())
        for (const auto& [name, by] : it->second)
          block += comment(tag + " does not apply to " + name + ": syscalls[" + std::to_string(by) +
                           "] decides it without conditions, and libseccomp keeps that rule "
                           "alone.");
      std::vector<std::string> names;  // in the entry's own order
      for (const auto& n : e.names)
        if (effective_[i].count(n) != 0 && std::find(names.begin(), names.end(), n) == names.end())
          names.push_back(n);
      if (!names.empty()) {
        std::string tail = e.args.empty() ? "" : " if " + d::condition_text(e.args);
        std::string action = to_string(e.action);
        bool permits = e.action.kind == ActionKind::allow || e.action.kind == ActionKind::log;
        std::vector<std::string> plain, dangerous;
        for (const auto& n : names)
          (permits && is_dangerous_syscall(n) ? dangerous : plain).push_back(n);
        if (!plain.empty()) wrap(block, action, plain, tail);
        if (!dangerous.empty()) {
          block +=
              comment(tag + " of " + source_ + " allows this; review it before relying on it.");
          block += action + " " + join(dangerous, " ") + tail + "\n";
        }
      }
      if (!block.empty()) out += "\n" + block;
    }
    // Proof that the text says what was meant: it must load without errors.
    LoadResult loaded = try_parse_policy(out, source_ + ".policy");
    if (!loaded.policy)
      throw ImportError(source_ + ": the imported policy does not load (a bug in import):\n" +
                        format(loaded.diagnostics));
    return out;
  }

  std::string_view text_;
  std::string source_;
  std::vector<std::string> caps_;
  Baseline baseline_;
  std::string kernel_text_;
  std::optional<std::pair<int, int>> kernel_;
  bool from_config_ = false;
  Action default_;
  std::string default_libseccomp_;
  std::vector<std::string> unknown_;  // names no architecture has
  std::string source_default_, default_note_;
  std::vector<std::string> other_arches_;
  std::vector<Entry> entries_;
  std::vector<std::string> left_out_, not_native_;
  std::vector<std::set<std::string>> effective_;  // per entry, the names it decides
  std::map<std::size_t, std::vector<std::string>> same_as_default_;
  std::map<std::size_t, std::vector<std::pair<std::string, std::size_t>>> overridden_;
  std::map<std::size_t, std::vector<std::string>> by_baseline_;
};

}  // namespace

std::string import_oci_seccomp(std::string_view json_text, std::string_view source_name,
                               const ImportTarget& target) {
  return Importer(json_text, source_name, target).run();
}

}  // namespace jail::policy
