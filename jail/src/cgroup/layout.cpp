// Which cgroup hierarchies are mounted, and where this process sits in each.
//
// /proc/self/mountinfo gives the hierarchies (fstype cgroup or cgroup2; a v1 mount lists its
// controllers in the super options) and the part of each hierarchy a mount shows (field 4, not
// "/" inside a cgroup namespace or for a bind mount). /proc/self/cgroup gives our own path per
// hierarchy: "0::/path" for v2, "<id>:<controllers>:/path" for v1.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "cgroup.hpp"
#include "files.hpp"
#include "mountinfo.hpp"

namespace jail::cgroup {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::none:
      return "none";
    case Mode::v1:
      return "v1";
    case Mode::hybrid:
      return "hybrid";
    case Mode::v2:
      return "v2";
  }
  return "?";
}

bool Hierarchy::has(std::string_view controller) const {
  return std::find(controllers.begin(), controllers.end(), controller) != controllers.end();
}

std::string Hierarchy::dir_of(std::string_view cgroup_path) const {
  if (mount_point.empty() || cgroup_path.empty() || cgroup_path.front() != '/') return {};
  if (mount_root == "/") {
    return cgroup_path == "/" ? mount_point : mount_point + std::string(cgroup_path);
  }
  if (cgroup_path == mount_root) return mount_point;
  if (cgroup_path.substr(0, mount_root.size()) == mount_root &&
      cgroup_path.size() > mount_root.size() && cgroup_path[mount_root.size()] == '/') {
    return mount_point + std::string(cgroup_path.substr(mount_root.size()));
  }
  return {};  // our cgroup lies outside what this mount shows
}

const Hierarchy* Layout::v1_with(std::string_view controller) const {
  for (const auto& h : v1) {
    if (h.has(controller)) return &h;
  }
  return nullptr;
}

std::string Layout::describe() const {
  std::string out = fmt::format("cgroup mode {}\n", to_string(mode));
  auto line = [&](const Hierarchy& h) {
    out += fmt::format("  v{} [{}] at {}: own cgroup {} ({})\n", h.version,
                       fmt::join(h.controllers, ","), h.mount_point,
                       h.own_dir.empty() ? std::string("not visible") : h.own_dir,
                       h.writable ? "writable" : "not writable by this user");
  };
  for (const auto& h : v1) line(h);
  if (v2) line(*v2);
  return out;
}

namespace {

// v1 controllers jail may meet in mount options; everything else there (rw, name=..., xattr,
// clone_children, ...) is an option, not a controller.
constexpr std::array kV1Controllers = {"cpu",     "cpuacct",    "cpuset", "memory",  "devices",
                                       "freezer", "net_cls",    "blkio",  "pids",    "hugetlb",
                                       "rdma",    "perf_event", "misc",   "net_prio"};

bool is_v1_controller(std::string_view word) {
  return std::find(kV1Controllers.begin(), kV1Controllers.end(), word) != kV1Controllers.end();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

struct Mount {
  std::string dev;  // major:minor identifies the hierarchy across several mounts of it
  std::string root;
  std::string point;
  bool v2 = false;
  std::vector<std::string> controllers;
};

std::vector<Mount> cgroup_mounts(std::string_view mountinfo) {
  std::vector<Mount> out;
  for (std::string_view line : split(mountinfo, '\n')) {
    if (line.empty()) continue;
    const auto f = split(line, ' ');
    // Optional fields end at "-"; fstype, source and super options follow it.
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    const std::string_view fstype = dash[1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    Mount m{std::string(f[2]),
            unescape_mountinfo(f[3]),
            unescape_mountinfo(f[4]),
            fstype == "cgroup2",
            {}};
    if (!m.v2) {
      for (std::string_view opt : split(dash[3], ',')) {
        if (is_v1_controller(opt)) m.controllers.emplace_back(opt);
      }
      if (m.controllers.empty()) continue;  // a named hierarchy such as name=systemd
    }
    out.push_back(std::move(m));
  }
  return out;
}

struct OwnPath {
  bool v2 = false;
  std::vector<std::string> controllers;
  std::string path;
};

std::vector<OwnPath> own_paths(std::string_view proc_self_cgroup) {
  std::vector<OwnPath> out;
  for (std::string_view line : split(proc_self_cgroup, '\n')) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    OwnPath p;
    p.v2 = line.substr(0, a) == "0" && b == a + 1;
    for (std::string_view c : split(line.substr(a + 1, b - a - 1), ',')) {
      if (is_v1_controller(c)) p.controllers.emplace_back(c);
    }
    p.path = std::string(line.substr(b + 1));
    out.push_back(std::move(p));
  }
  return out;
}

bool same_set(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// Of several mounts of one hierarchy, prefer one that shows our own cgroup.
void add_hierarchy(std::vector<Hierarchy>& list, const Mount& m, const std::string& own_path,
                   int version) {
  Hierarchy h;
  h.version = version;
  h.controllers = m.controllers;
  h.mount_point = m.point;
  h.mount_root = m.root;
  h.own_path = own_path;
  h.own_dir = own_path.empty() ? std::string{} : h.dir_of(own_path);
  for (auto& existing : list) {
    if (same_set(existing.controllers, h.controllers) && existing.version == version) {
      if (existing.own_dir.empty() && !h.own_dir.empty()) existing = std::move(h);
      return;
    }
  }
  list.push_back(std::move(h));
}

}  // namespace

Layout parse_layout(std::string_view mountinfo, std::string_view proc_self_cgroup) {
  Layout layout;
  const auto own = own_paths(proc_self_cgroup);
  std::vector<Hierarchy> v2s;
  for (const Mount& m : cgroup_mounts(mountinfo)) {
    std::string own_path;
    for (const auto& p : own) {
      if (m.v2 ? p.v2 : (!p.v2 && same_set(p.controllers, m.controllers))) own_path = p.path;
    }
    add_hierarchy(m.v2 ? v2s : layout.v1, m, own_path, m.v2 ? 2 : 1);
  }
  if (!v2s.empty()) layout.v2 = std::move(v2s.front());
  if (!layout.v1.empty()) {
    layout.mode = layout.v2 ? Mode::hybrid : Mode::v1;
  } else if (layout.v2) {
    layout.mode = Mode::v2;
  }
  return layout;
}

Layout detect_layout() {
  const auto mountinfo = files::read("/proc/self/mountinfo");
  const auto self = files::read("/proc/self/cgroup");
  if (!mountinfo || !self) return {};
  Layout layout = parse_layout(*mountinfo, *self);
  // AT_EACCESS: jail acts with its effective ids, so ask about those, not the real ones.
  // Delegation (systemd's Delegate=yes, or a chown by an admin) hands over the directory and
  // the files that manage it; all of them must be ours to write.
  auto may = [](const std::string& path, int mode) {
    return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
  };
  auto writable = [&](const std::string& dir, bool v2) {
    return !dir.empty() && may(dir, W_OK | X_OK) && may(dir + "/cgroup.procs", W_OK) &&
           (!v2 || may(dir + "/cgroup.subtree_control", W_OK));
  };
  for (auto& h : layout.v1) h.writable = writable(h.own_dir, false);
  if (layout.v2) {
    Hierarchy& h = *layout.v2;
    h.writable = writable(h.own_dir, true);
    if (!h.own_dir.empty()) {
      if (const auto text = files::read(h.own_dir + "/cgroup.controllers")) {
        h.controllers = files::words(*text);
      }
    }
  }
  return layout;
}

}  // namespace jail::cgroup
