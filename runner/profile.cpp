#include "profile.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "run_options.hpp"
#include "units.hpp"

namespace jail::runner {
namespace {

// How a key's value is written in TOML and turned into the flag's text.
enum class Type {
  text,      // a string
  path,      // a string; relative to the profile's directory
  size,      // "512M" or a number of bytes
  duration,  // "30s"
  number,    // a non-negative integer
  cores,     // 0.5, 2 or "1.5"
  toggle,    // true sets the switch; false leaves it unset
  count,     // -v repeated
  texts,     // an array of strings, one flag each
  binds,     // an array of "SRC[:DST]", SRC relative to the profile's directory
  env,       // a table of KEY = "VALUE"
  choice,    // one of a few strings
};

struct Key {
  std::string_view name;
  Type type;
  std::vector<std::string_view> choices = {};
};

const std::vector<Key>& keys() {
  static const std::vector<Key> all = {
      {"uid", Type::number},
      {"gid", Type::number},
      {"cwd", Type::text},
      {"no-cwd", Type::toggle},
      {"bind-follow", Type::toggle},
      {"dry-run", Type::toggle},
      {"session-dir", Type::path},
      {"dry-run-size", Type::text},
      {"trace-timing", Type::toggle},
      {"bind", Type::binds},
      {"ro-bind", Type::binds},
      {"tmpfs", Type::texts},
      {"protect", Type::texts},
      {"unmask", Type::texts},
      {"allow-socket", Type::texts},
      {"allow-abstract", Type::texts},
      {"net-allow", Type::texts},
      {"net-allow-private", Type::toggle},
      {"rootfs", Type::path},
      {"env", Type::env},
      {"pass-env", Type::texts},
      {"hostname", Type::text},
      {"net", Type::choice, {"none", "host"}},
      {"isolation", Type::choice, {"auto", "namespaces", "landlock"}},
      {"policy", Type::path},
      {"tty", Type::choice, {"auto", "always", "never"}},
      {"tmpfs-size", Type::size},
      {"memory", Type::size},
      {"pids", Type::number},
      {"cpus", Type::cores},
      {"timeout", Type::duration},
      {"kill-grace", Type::duration},
      {"cpu-time", Type::duration},
      {"max-file-size", Type::size},
      {"max-open-files", Type::number},
      {"rlimit", Type::texts},
      {"cgroup-parent", Type::text},
      {"runtime", Type::choice, {"native", "runsc"}},
      {"runsc-platform", Type::text},
      {"max-output", Type::size},
      {"stdin", Type::choice, {"inherit", "none"}},
      {"audit-log", Type::path},
      {"status-file", Type::path},
      {"verbose", Type::count},
      {"quiet", Type::toggle},
      {"log-file", Type::path},
      {"log-format", Type::choice, {"text", "json"}},
  };
  return all;
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "ro_bind" and "ro-bnd" both mean ro-bind; past a third of the name it is a guess too far.
std::string suggestion(std::string_view name) {
  std::string dashed(name);
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  const Key* best = nullptr;
  std::size_t best_distance = dashed.size() / 3 + 1;
  for (const Key& key : keys()) {
    std::size_t d = edit_distance(dashed, key.name);
    if (d < best_distance) best = &key, best_distance = d;
  }
  return best ? fmt::format(" (did you mean '{}'?)", best->name) : "";
}

class Loader {
 public:
  Loader(std::string file, std::filesystem::path dir)
      : file_(std::move(file)), dir_(std::move(dir)) {}

  void load(const toml::table& table) {
    // toml++ keeps keys sorted; mounts apply in the order they are written, so go by position.
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (auto&& [name, node] : table) entries.emplace_back(&name, &node);
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      const auto &x = a.first->source().begin, &y = b.first->source().begin;
      return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    for (const auto& [key, value] : entries) {
      const toml::key& name = *key;
      const toml::node& node = *value;
      const auto it = std::find_if(keys().begin(), keys().end(),
                                   [&](const Key& k) { return k.name == name.str(); });
      if (it == keys().end() &&
          (name.str() == "status-fd" || name.str() == "log-fd" || name.str() == "profile")) {
        error(name.source(),
              fmt::format("'{}' is for the command line only: {}", name.str(),
                          name.str() == "profile" ? "a profile does not name another"
                                                  : "a file descriptor is the caller's own"));
        continue;
      }
      if (it == keys().end()) {
        error(name.source(), fmt::format("unknown key '{}'{}; a profile's keys are jail's run "
                                         "flags without their dashes (see jail --help)",
                                         name.str(), suggestion(name.str())));
        continue;
      }
      add(*it, node, at(name.source()));
    }
  }

  Profile finish() {
    if (!errors_.empty()) throw UsageError(fmt::format("{}", fmt::join(errors_, "\n")));
    return Profile{file_, std::move(settings_)};
  }

  // The settings read so far, whether or not others were wrong.
  [[nodiscard]] const std::vector<ProfileSetting>& settings() const { return settings_; }

  void error(const toml::source_region& where, const std::string& message) {
    errors_.push_back(at(where) + ": " + message);
  }

 private:
  std::string at(const toml::source_region& where) const {
    return fmt::format("{}:{}:{}", file_, where.begin.line, where.begin.column);
  }

  void set(const Key& key, std::optional<std::string> value, std::string where) {
    settings_.push_back(
        ProfileSetting{"--" + std::string(key.name), std::move(value), std::move(where)});
  }

  void empty(const Key& key, const toml::node& node) {
    error(node.source(),
          fmt::format("'{}' has an empty string; leave it out for jail's default", key.name));
  }

  void wrong(const Key& key, const toml::node& node, std::string_view expected) {
    error(node.source(),
          fmt::format("'{}' must be {}, not {}", key.name, expected, type_name(node)));
  }

  std::string relative_to_profile(const std::string& path) const {
    if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (dir_ / path).lexically_normal().string();
  }

  void add(const Key& key, const toml::node& node, const std::string& where) {
    const auto* text = node.as_string();
    switch (key.type) {
      case Type::text:
      case Type::path:
        if (!text) return wrong(key, node, "a string");
        // "" would reach the flag parser as a flag with no value, which then took the next word.
        if (text->get().empty()) return empty(key, node);
        // A policy is a shipped name unless it looks like a path (as --policy decides).
        if (key.type == Type::path &&
            (key.name != "policy" || text->get().find('/') != std::string::npos ||
             text->get().ends_with(".policy"))) {
          return set(key, relative_to_profile(text->get()), where);
        }
        return set(key, text->get(), where);
      case Type::size:
        if (const auto* n = node.as_integer(); n && n->get() > 0)
          return set(key, std::to_string(n->get()), where);
        if (!text) return wrong(key, node, "a size like \"512M\" or a positive number of bytes");
        if (!parse_size(text->get()).value_or(0))
          return error(node.source(),
                       fmt::format("'{}' = \"{}\" is not a size; write it like \"64M\" or \"1G\"",
                                   key.name, text->get()));
        return set(key, text->get(), where);
      case Type::duration:
        if (!text) return wrong(key, node, "a duration string like \"30s\" or \"500ms\"");
        if (DurationProblem problem{}; !parse_duration(text->get(), &problem)) {
          return error(node.source(),
                       problem == DurationProblem::not_whole_ms
                           ? fmt::format("'{}' = \"{}\" is {}", key.name, text->get(),
                                         duration_problem_text(problem))
                           : fmt::format("'{}' = \"{}\" is not a duration; write it like "
                                         "\"500ms\", \"30s\" or \"2m\"",
                                         key.name, text->get()));
        }
        return set(key, text->get(), where);
      case Type::number:
        if (const auto* n = node.as_integer()) {
          // Checked here, where the line is known: the flag parser only says it could not convert.
          constexpr std::int64_t kLargest = 4294967295;  // the widest of them, a uid or gid
          if (n->get() >= 0 && n->get() <= kLargest)
            return set(key, std::to_string(n->get()), where);
          return error(node.source(), fmt::format("'{}' = {} is out of range: 0 to {}", key.name,
                                                  n->get(), kLargest));
        }
        return wrong(key, node, "a non-negative integer");
      case Type::cores:
        if (const auto* n = node.as_integer()) return set(key, std::to_string(n->get()), where);
        if (const auto* f = node.as_floating_point())
          return set(key, fmt::format("{}", f->get()), where);
        if (text) return set(key, text->get(), where);
        return wrong(key, node, "a number of cores like 0.5 or 2");
      case Type::toggle:
        if (const auto* b = node.as_boolean()) {
          if (b->get()) set(key, std::nullopt, where);
          return;
        }
        return wrong(key, node, "true or false");
      case Type::count:
        if (const auto* n = node.as_integer(); n && n->get() >= 0 && n->get() <= 6) {
          for (std::int64_t i = 0; i < n->get(); ++i) set(key, std::nullopt, where);
          return;
        }
        return wrong(key, node, "an integer from 0 to 6");
      case Type::texts:
      case Type::binds:
        return add_list(key, node, where);
      case Type::env:
        return add_env(key, node);
      case Type::choice:
        if (text &&
            std::find(key.choices.begin(), key.choices.end(), text->get()) != key.choices.end())
          return set(key, text->get(), where);
        return error(node.source(), fmt::format("'{}' must be one of \"{}\"", key.name,
                                                fmt::join(key.choices, "\", \"")));
    }
  }

  void add_list(const Key& key, const toml::node& node, const std::string& where) {
    const auto* array = node.as_array();
    if (!array)
      return wrong(key, node, fmt::format("an array of strings, e.g. {} = [\"…\"]", key.name));
    for (const toml::node& element : *array) {
      const auto* text = element.as_string();
      if (!text) {
        wrong(key, element, "a string (in the array)");
        continue;
      }
      std::string value = text->get();
      if (value.empty()) {
        empty(key, element);
        continue;
      }
      if (key.type == Type::binds) {
        const auto colon = value.find(':');
        value = relative_to_profile(value.substr(0, colon)) +
                (colon == std::string::npos ? "" : value.substr(colon));
      }
      set(key, value, element.source().begin.line != 0 ? at(element.source()) : where);
    }
  }

  void add_env(const Key& key, const toml::node& node) {
    const auto* table = node.as_table();
    if (!table) return wrong(key, node, "a table: [env] with KEY = \"VALUE\" lines");
    for (auto&& [name, value] : *table) {
      const auto* text = value.as_string();
      if (!text) {
        error(value.source(),
              fmt::format("env.{} must be a string, not {}", name.str(), type_name(value)));
        continue;
      }
      if (name.str().empty() || name.str().find('=') != std::string_view::npos) {
        error(name.source(), fmt::format("env: '{}' is not a variable name", name.str()));
        continue;
      }
      set(key, fmt::format("{}={}", name.str(), text->get()), at(name.source()));
    }
  }

  std::string file_;
  std::filesystem::path dir_;
  std::vector<ProfileSetting> settings_;
  std::vector<std::string> errors_;
};

}  // namespace

Profile parse_profile(std::string_view text, const std::string& path) {
  Loader loader(path, std::filesystem::absolute(path).parent_path());
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    loader.error(e.source(), fmt::format("not valid TOML: {}", e.description()));
    (void)loader.finish();
  }
  loader.load(table);
  return loader.finish();
}

namespace {

std::string read_profile_text(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw UsageError(fmt::format("--profile {}: no such file (or not a regular file)", path));
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad() || !in.is_open())
    throw UsageError(fmt::format("--profile {}: cannot read the file", path));
  return buffer.str();
}

}  // namespace

Profile load_profile(const std::string& path) {
  return parse_profile(read_profile_text(path), path);
}

std::optional<std::string> profile_status_file(const std::string& path) noexcept {
  try {
    Loader loader(path, std::filesystem::absolute(path).parent_path());
    loader.load(toml::parse(read_profile_text(path), path));
    for (const ProfileSetting& setting : loader.settings()) {
      if (setting.flag == "--status-file") return setting.value;
    }
  } catch (const std::exception&) {
    // Unreadable, or not TOML at all: there is no status file to write to.
  }
  return std::nullopt;
}

std::vector<std::string_view> profile_keys() {
  std::vector<std::string_view> out;
  for (const Key& key : keys()) out.push_back(key.name);
  return out;
}

}  // namespace jail::runner
