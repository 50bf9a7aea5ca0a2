// Lowering: parsed files → the Policy IR. Resolves includes (in place, relative to the
// including file or by shipped name), syscall names, constants and errno names, and collects
// every error with its position before deciding that the policy is unusable.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "oci_conditions.hpp"
#include "parser.hpp"
#include "policy/constants.hpp"
#include "policy/policy.hpp"
#include "policy/suggest.hpp"
#include "policy/syscalls.hpp"
#include "policy/text_file.hpp"
#include "shipped.hpp"
#include "within.hpp"

namespace jail::policy {
namespace {

namespace fs = std::filesystem;
using detail::Atom;
using detail::CondNode;
using detail::Statement;
using detail::ValueExpr;

constexpr int kMaxIncludeDepth = 8;
// SECCOMP_RET_DATA keeps 16 bits and the kernel caps at MAX_ERRNO (4095), but libseccomp, which
// runc and crun load an exported profile with, refuses 4095: one bound for every way out.
constexpr int kMaxErrno = 4094;

struct SourceId {
  std::string key;      // what cycles are detected on
  std::string display;  // what diagnostics print
  std::string dir;      // where relative includes resolve ("" for shipped files)
  bool shipped = false;
  std::string text;
};

struct EffectiveDefault {
  Action action;
  SourceLocation where;
};

const detail::ShippedFile* find_shipped(std::string_view name) {
  for (const auto& f : detail::shipped_files())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> selectable_shipped() {
  std::vector<std::string> names;
  // The baseline is prepended to every policy; it is not a policy on its own.
  for (const auto& f : detail::shipped_files())
    if (f.name != "baseline") names.emplace_back(f.name);
  return names;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// The key the shipped baseline is loaded under; no file's key has the "shipped:" prefix.
const std::string kBaselineKey = "shipped:baseline";

SourceId shipped_source(const detail::ShippedFile& f) {
  return SourceId{"shipped:" + std::string(f.name), std::string(f.name) + ".policy", "", true,
                  std::string(f.text)};
}

// The `within` line of the top file, resolved once the file has been read.
struct WithinLine {
  std::string target;
  SourceLocation where;
  std::string line;
};

class Loader {
 public:
  // `bounds`: the keys of the files whose `within` led here, to refuse a cycle of them.
  explicit Loader(Baseline baseline, std::vector<std::string> bounds = {})
      : baseline_(baseline), bounds_(std::move(bounds)) {}

  LoadResult run(const SourceId& top) {
    if (const auto* base = find_shipped("baseline");
        base != nullptr && baseline_ == Baseline::first)
      load(shipped_source(*base), 0);
    auto def = load(top, 0);
    // Without a default and without other errors (a failed include may hold the default).
    if (!def && !has_errors(diags_)) {
      error(SourceLocation{top.display, 0, 0},
            "no 'default' line: every policy names what happens to syscalls no rule decides, "
            "e.g. 'default errno EPERM'",
            "");
    } else if (def) {
      policy_.default_action = def->action;
      policy_.default_where = def->where;
    }
    policy_.name = top.display;
    if (within_ && !has_errors(diags_)) limit(top);
    // Report in reading order: files in the order they were first read, then line and column.
    auto file_rank = [&](const std::string& file) {
      for (std::size_t i = 0; i < policy_.sources.size(); ++i)
        if (policy_.sources[i].name == file) return i;
      return policy_.sources.size();
    };
    std::stable_sort(diags_.begin(), diags_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
      return std::make_tuple(file_rank(a.where.file), a.where.line, a.where.column) <
             std::make_tuple(file_rank(b.where.file), b.where.line, b.where.column);
    });
    LoadResult result;
    result.diagnostics = std::move(diags_);
    if (!has_errors(result.diagnostics)) result.policy = std::move(policy_);
    return result;
  }

 private:
  void error(SourceLocation where, std::string message, std::string line) {
    diags_.push_back(
        Diagnostic{Severity::error, std::move(where), std::move(message), std::move(line)});
  }

  std::optional<EffectiveDefault> load(const SourceId& src, int depth) {
    bool seen = false;
    for (const auto& s : policy_.sources) seen = seen || s.name == src.display;
    if (!seen) policy_.sources.push_back(SourceFile{src.display, src.text});
    stack_.push_back(src);
    detail::ParsedFile parsed = detail::parse_file(src.text, src.display);
    for (auto& d : parsed.diagnostics) diags_.push_back(std::move(d));
    std::optional<EffectiveDefault> own;
    std::optional<EffectiveDefault> inherited;
    for (const Statement& st : parsed.statements) {
      const std::string& line = parsed.lines[static_cast<std::size_t>(st.line - 1)];
      auto at = [&](int column) { return SourceLocation{src.display, st.line, column}; };
      switch (st.kind) {
        case Statement::Kind::default_action: {
          auto action = lower_action(st.action, at, line);
          if (own) {
            error(at(st.action.column),
                  "second 'default' in this file (the first is at line " +
                      std::to_string(own->where.line) + ")",
                  line);
          } else {
            // Even a default whose action is misspelt counts as present: one error, not two.
            own = EffectiveDefault{action.value_or(Action{}), at(1)};
          }
          break;
        }
        case Statement::Kind::include: {
          auto def = include(src, st, depth, at(st.include_column), line);
          if (def && !inherited) inherited = def;
          break;
        }
        case Statement::Kind::within:
          if (depth > 0) {
            error(at(1),
                  "'within' bounds a whole policy, so it belongs in the top file, not in an "
                  "included one; move it to the file jail is given",
                  line);
          } else if (within_) {
            error(at(1),
                  "second 'within' (the first is at line " + std::to_string(within_->where.line) +
                      "); a policy has one bound",
                  line);
          } else {
            within_ = WithinLine{st.include_target, at(st.include_column), line};
          }
          break;
        case Statement::Kind::rule:
          lower_rule(st, src.display, line, src.shipped && src.key == kBaselineKey);
          break;
      }
    }
    stack_.pop_back();
    // A file's own default wins; otherwise the first included file that has one.
    return own ? own : inherited;
  }

  // The file or shipped policy `target` names, written in `from`; nullopt (and an error at
  // `where`) when there is none.
  // `what` names the file in an error: "included file".
  std::optional<SourceId> resolve(const SourceId& from, const std::string& target,
                                  std::string_view what, const SourceLocation& where,
                                  const std::string& line) {
    bool is_path =
        target.find('/') != std::string::npos || (target.size() > 7 && target.ends_with(".policy"));
    std::string shipped_name =
        target.ends_with(".policy") ? target.substr(0, target.size() - 7) : target;
    if (!is_path || from.shipped) {
      const auto* f = shipped_name == "baseline" ? nullptr : find_shipped(shipped_name);
      if (f == nullptr) {
        auto names = selectable_shipped();
        std::string hint = detail::did_you_mean(shipped_name, names);
        error(where,
              "unknown shipped policy '" + target + "'" +
                  (hint.empty() ? " (shipped: " + join(names, ", ") + ")" : hint),
              line);
        return std::nullopt;
      }
      return shipped_source(*f);
    }
    fs::path path = fs::path(target).is_absolute() ? fs::path(target) : fs::path(from.dir) / target;
    std::string why;
    std::optional<std::string> text = read_text_file(path.string(), why);
    if (!text) {
      error(where,
            "cannot read " + std::string(what) + " '" + path.lexically_normal().string() +
                "': " + why,
            line);
      return std::nullopt;
    }
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(path, ec);
    return SourceId{ec ? path.string() : canonical.string(), path.lexically_normal().string(),
                    path.parent_path().string(), false, std::move(*text)};
  }

  std::optional<EffectiveDefault> include(const SourceId& from, const Statement& st, int depth,
                                          const SourceLocation& where, const std::string& line) {
    std::optional<SourceId> next = resolve(from, st.include_target, "included file", where, line);
    if (!next) return std::nullopt;
    for (const auto& s : stack_) {
      if (s.key != next->key) continue;
      std::string chain;
      for (const auto& t : stack_) chain += t.display + " → ";
      error(where, "include cycle: " + chain + next->display, line);
      return std::nullopt;
    }
    if (depth + 1 > kMaxIncludeDepth) {
      error(where, "includes nested deeper than " + std::to_string(kMaxIncludeDepth) + " files",
            line);
      return std::nullopt;
    }
    return load(*next, depth + 1);
  }

  template <typename At>
  std::optional<Action> lower_action(const detail::ActionNode& node, At at,
                                     const std::string& line) {
    Action a;
    a.kind = node.kind;
    a.quiet = node.quiet;
    if (node.kind != ActionKind::errno_code) return a;
    const Atom& v = *node.errno_atom;
    long long value = 0;
    if (v.is_number) {
      if (v.number == 0 || v.number > kMaxErrno) {
        error(at(v.column),
              "errno " + std::to_string(v.number) + " is out of range: use 1 … " +
                  std::to_string(kMaxErrno) + (v.number == 0 ? " ('errno 0' fakes success)" : ""),
              line);
        return std::nullopt;
      }
      value = static_cast<long long>(v.number);
    } else if (auto e = errno_value(v.name)) {
      value = *e;
    } else {
      std::vector<std::string> names;
      for (const auto& c : all_errno_names()) names.emplace_back(c.name);
      error(at(v.column),
            "unknown errno name '" + v.name + "'" + detail::did_you_mean(v.name, names), line);
      return std::nullopt;
    }
    a.errno_value = static_cast<std::uint16_t>(value);
    return a;
  }

  std::optional<std::uint64_t> value_of(const ValueExpr& v, const std::string& file, int line_no,
                                        const std::string& line) {
    std::uint64_t out = 0;
    bool ok = true;
    for (const Atom& a : v.atoms) {
      if (a.is_number) {
        out |= a.number;
      } else if (auto c = constant_value(a.name)) {
        out |= *c;
      } else {
        std::vector<std::string> names;
        for (const auto& nc : all_constants()) names.emplace_back(nc.name);
        error(SourceLocation{file, line_no, a.column},
              "unknown constant '" + a.name + "'" + detail::did_you_mean(a.name, names), line);
        ok = false;
      }
    }
    return ok ? std::optional(out) : std::nullopt;
  }

  std::optional<Condition> lower_cond(const CondNode& n, const std::string& file, int line_no,
                                      const std::string& line) {
    Condition c;
    bool ok = true;
    switch (n.kind) {
      case CondNode::Kind::all_of:
      case CondNode::Kind::any_of:
        c.kind =
            n.kind == CondNode::Kind::all_of ? Condition::Kind::all_of : Condition::Kind::any_of;
        for (const auto& op : n.operands) {
          auto sub = lower_cond(op, file, line_no, line);
          ok = ok && sub.has_value();
          if (sub) c.operands.push_back(std::move(*sub));
        }
        break;
      case CondNode::Kind::compare:
      case CondNode::Kind::in_set: {
        std::uint64_t mask = ~std::uint64_t{0};
        if (n.mask) {
          auto m = value_of(*n.mask, file, line_no, line);
          ok = m.has_value();
          if (m) mask = *m;
        }
        std::vector<Condition> compares;
        for (const auto& v : n.values) {
          auto value = value_of(v, file, line_no, line);
          ok = ok && value.has_value();
          Condition cmp;
          cmp.arg = n.arg;
          cmp.mask = mask;
          cmp.op = n.op;
          cmp.value = value.value_or(0);
          compares.push_back(cmp);
        }
        if (n.kind == CondNode::Kind::compare) {
          c = compares.front();
        } else {
          c.kind = Condition::Kind::any_of;
          c.operands = std::move(compares);
        }
        break;
      }
    }
    return ok ? std::optional(std::move(c)) : std::nullopt;
  }

  // The kernel reads some arguments as 32-bit ints; compare only what it reads. Returns why a
  // comparison would mean something else cut to 32 bits (then nothing is narrowed).
  static std::string narrow(Condition& c, int nr) {
    if (c.kind != Condition::Kind::compare) {
      for (auto& op : c.operands) {
        if (std::string why = narrow(op, nr); !why.empty()) return why;
      }
      return {};
    }
    if (!is_32bit_argument(nr, c.arg)) return {};
    if (std::string why = detail::why_not_32_bits(c.op, c.value); !why.empty()) return why;
    c.mask &= 0xffffffffULL;
    c.value &= 0xffffffffULL;
    return {};
  }

  void lower_rule(const Statement& st, const std::string& file, const std::string& line,
                  bool baseline) {
    auto at = [&](int column) { return SourceLocation{file, st.line, column}; };
    auto action = lower_action(st.action, at, line);
    std::optional<Condition> cond;
    bool cond_ok = true;
    if (st.condition) {
      cond = lower_cond(*st.condition, file, st.line, line);
      cond_ok = cond.has_value();
    }
    for (const auto& name : st.syscalls) {
      auto nr = syscall_number(name.name);
      if (!nr || *nr < 0) {
        error(at(name.column),
              "unknown syscall '" + name.name + "'" +
                  detail::did_you_mean(name.name, all_syscall_names()),
              line);
        continue;
      }
      if (!action || !cond_ok) continue;
      Rule r;
      r.syscall = *nr;
      r.action = *action;
      r.condition = cond;
      if (r.condition) {
        if (std::string why = narrow(*r.condition, *nr); !why.empty()) {
          error(at(name.column), "a condition on " + name.name + ": " + why, line);
          continue;
        }
      }
      r.condition_text = st.condition_text;
      r.where = at(name.column);
      r.baseline = baseline;
      policy_.rules.push_back(std::move(r));
    }
  }

  // Limits the loaded policy by the one its `within` line names, loaded whole on its own.
  void limit(const SourceId& top) {
    const WithinLine& within = *within_;
    std::optional<SourceId> bound =
        resolve(top, within.target, "the file 'within' names,", within.where, within.line);
    if (!bound) return;
    std::vector<std::string> chain = bounds_;
    chain.push_back(top.key);
    if (std::find(chain.begin(), chain.end(), bound->key) != chain.end()) {
      error(within.where, "'within' cycle: " + bound->display + " is bounded by this policy",
            within.line);
      return;
    }
    if (chain.size() > static_cast<std::size_t>(kMaxIncludeDepth)) {
      error(within.where,
            "'within' chained deeper than " + std::to_string(kMaxIncludeDepth) + " policies",
            within.line);
      return;
    }
    LoadResult loaded = Loader(baseline_, std::move(chain)).run(*bound);
    for (auto& d : loaded.diagnostics) diags_.push_back(std::move(d));
    if (!loaded.policy) {
      error(within.where,
            "the bound " + bound->display + " does not load; its errors are listed with it",
            within.line);
      return;
    }
    policy_ = detail::limited_by(std::move(policy_), *loaded.policy);
    policy_.within = loaded.policy->name;
    policy_.within_where = within.where;
    policy_.within_policy = std::make_shared<const Policy>(std::move(*loaded.policy));
  }

  Baseline baseline_;
  std::vector<std::string> bounds_;
  std::optional<WithinLine> within_;
  Policy policy_;
  std::vector<Diagnostic> diags_;
  std::vector<SourceId> stack_;
};

LoadResult load_source(const SourceId& src, Baseline baseline = Baseline::first) {
  return Loader(baseline).run(src);
}

}  // namespace

std::vector<std::string> shipped_policy_names() {
  return selectable_shipped();
}

LoadResult try_parse_policy(std::string_view text, std::string_view display_name,
                            std::string_view base_dir, Baseline baseline) {
  return load_source(SourceId{"text:" + std::string(display_name), std::string(display_name),
                              std::string(base_dir), false, std::string(text)},
                     baseline);
}

LoadResult try_load_policy(std::string_view name_or_path) {
  std::string arg(name_or_path);
  bool is_path = arg.find('/') != std::string::npos || arg.ends_with(".policy");
  if (!is_path) {
    const auto* f = arg == "baseline" ? nullptr : find_shipped(arg);
    if (f == nullptr) {
      auto names = selectable_shipped();
      LoadResult r;
      r.diagnostics.push_back(Diagnostic{
          Severity::error, SourceLocation{arg, 0, 0},
          "no shipped policy named '" + arg + "'" + detail::did_you_mean(arg, names) +
              "; shipped policies: " + join(names, ", ") + " (a file path needs a '/' or .policy)",
          ""});
      return r;
    }
    return load_source(shipped_source(*f));
  }
  std::string why;
  std::optional<std::string> text = read_text_file(arg, why);
  if (!text) {
    LoadResult r;
    r.diagnostics.push_back(Diagnostic{Severity::error, SourceLocation{arg, 0, 0},
                                       "cannot read the policy file: " + why, ""});
    return r;
  }
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(arg, ec);
  return load_source(SourceId{ec ? arg : canonical.string(), arg,
                              fs::path(arg).parent_path().string(), false, std::move(*text)});
}

Policy load_policy(std::string_view name_or_path) {
  LoadResult r = try_load_policy(name_or_path);
  if (!r.policy) throw PolicyError(std::move(r.diagnostics));
  return std::move(*r.policy);
}

Policy parse_policy(std::string_view text, std::string_view display_name,
                    std::string_view base_dir) {
  LoadResult r = try_parse_policy(text, display_name, base_dir);
  if (!r.policy) throw PolicyError(std::move(r.diagnostics));
  return std::move(*r.policy);
}

}  // namespace jail::policy
