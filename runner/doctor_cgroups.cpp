// Cgroups: which layout this host mounts (v2, v1, hybrid, none), where the caller's own cgroups
// are, which controllers jail can use there and whether the caller may create a child cgroup.
// Doctor only reads and calls access(2): it never creates or writes anything in a cgroup
// filesystem.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "doctor.hpp"

namespace jail::doctor {
namespace {

// The controllers jail sets limits with. memory and pids stop a tool from taking the machine down
// (OOM, fork bombs); cpu only shares time fairly, so without it jail is limited, not unsafe.
const std::vector<std::string> kRequiredControllers = {"memory", "pids"};
const std::vector<std::string> kWantedControllers = {"memory", "pids", "cpu"};

struct CgroupMount {
  std::string root;  // the cgroup this mount shows at its mount point ("/" normally)
  std::string mount_point;
  bool v2 = false;
  std::vector<std::string> controllers;  // v1 only
  std::string name;                      // v1 named hierarchy (name=systemd), no controllers
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string octal = field.substr(i + 1, 3);
      if (octal.find_first_not_of("01234567") == std::string::npos) {
        out.push_back(static_cast<char>(std::stoi(octal, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Controller names the kernel knows for v1, from /proc/cgroups; used to tell controllers apart
// from the other mount options (rw, xattr, nsdelegate, …) of a v1 mount.
std::vector<std::string> known_v1_controllers() {
  std::vector<std::string> names;
  std::istringstream in(read_text_file("/proc/cgroups"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

std::vector<CgroupMount> cgroup_mounts() {
  const std::vector<std::string> known = known_v1_controllers();
  std::vector<CgroupMount> mounts;
  std::istringstream in(read_text_file("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split_words(line);
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (dash == fields.end() || fields.end() - dash < 4 || fields.size() < 5) continue;
    const std::string& fstype = *(dash + 1);
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    CgroupMount mount;
    mount.root = unescape_mountinfo(fields[3]);
    mount.mount_point = unescape_mountinfo(fields[4]);
    mount.v2 = fstype == "cgroup2";
    if (!mount.v2) {
      for (const std::string& option : split(*(dash + 3), ',')) {
        if (option.rfind("name=", 0) == 0) mount.name = option.substr(5);
        if (contains(known, option)) mount.controllers.push_back(option);
      }
    }
    mounts.push_back(mount);
  }
  return mounts;
}

// /proc/self/cgroup: "hierarchy-id:controllers:path"; v2 is the line with id 0 and no controllers.
struct OwnCgroups {
  std::string v2_path;
  bool has_v2 = false;
  std::map<std::string, std::string> v1_paths;  // controller or "name=…" → path
};

OwnCgroups own_cgroups() {
  OwnCgroups own;
  std::istringstream in(read_text_file("/proc/self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) {
      own.v2_path = path;
      own.has_v2 = true;
      continue;
    }
    for (const std::string& controller : split(controllers, ',')) own.v1_paths[controller] = path;
  }
  return own;
}

// Where a cgroup shows in a mount: the mount shows the subtree at `root`, so a cgroup outside it
// (a container's view) is not reachable here and the answer is empty.
std::string visible_dir(const CgroupMount& mount, const std::string& path) {
  if (mount.root == "/") return path == "/" ? mount.mount_point : mount.mount_point + path;
  if (path == mount.root) return mount.mount_point;
  if (path.rfind(mount.root + "/", 0) == 0)
    return mount.mount_point + path.substr(mount.root.size());
  return "";
}

// Creating a child cgroup needs write and search permission on the directory. access(2) asks
// without creating anything; AT_EACCESS because jail acts with its effective ids.
bool can_create_child(const std::string& dir) {
  return !dir.empty() && faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0;
}

bool can_write(const std::string& file) {
  return faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) == 0;
}

}  // namespace

Check check_cgroups() {
  Check check;
  check.name = "cgroups";
  const std::vector<CgroupMount> mounts = cgroup_mounts();
  const OwnCgroups own = own_cgroups();

  std::vector<std::string> v1_controllers;
  std::vector<std::string> v1_named;
  const CgroupMount* v2_mount = nullptr;
  std::map<std::string, const CgroupMount*> v1_mount_of;
  for (const CgroupMount& mount : mounts) {
    if (mount.v2) {
      if (v2_mount == nullptr) v2_mount = &mount;
      continue;
    }
    if (!mount.name.empty() && !contains(v1_named, mount.name)) v1_named.push_back(mount.name);
    for (const std::string& controller : mount.controllers) {
      if (!contains(v1_controllers, controller)) v1_controllers.push_back(controller);
      if (v1_mount_of.count(controller) == 0) v1_mount_of[controller] = &mount;
    }
  }
  // A v1 hierarchy without controllers (name=systemd) limits nothing, so it does not make the
  // layout v1 or hybrid: what counts is where the controllers are.
  std::string layout = "none";
  if (!v1_controllers.empty() && v2_mount != nullptr) {
    layout = "hybrid";
  } else if (!v1_controllers.empty()) {
    layout = "v1";
  } else if (v2_mount != nullptr) {
    layout = "v2";
  }
  check.facts["layout"] = layout;

  nlohmann::ordered_json v1;
  v1["controllers"] = v1_controllers;
  v1["named_hierarchies"] = v1_named;
  nlohmann::ordered_json v1_own = nlohmann::ordered_json::object();
  for (const auto& [controller, path] : own.v1_paths) v1_own[controller] = path;
  v1["own_cgroups"] = v1_own;
  check.facts["v1"] = v1;

  // v2: the caller's own cgroup, what it offers and what is already enabled for children.
  std::vector<std::string> v2_controllers;
  std::vector<std::string> v2_subtree;
  std::string v2_dir;
  nlohmann::ordered_json v2;
  v2["mount_point"] = v2_mount != nullptr ? nlohmann::ordered_json(v2_mount->mount_point) : nullptr;
  v2["own_cgroup"] = own.has_v2 ? nlohmann::ordered_json(own.v2_path) : nullptr;
  if (v2_mount != nullptr && own.has_v2) {
    v2_dir = visible_dir(*v2_mount, own.v2_path);
    if (!v2_dir.empty()) {
      v2_controllers = split_words(read_text_file(v2_dir + "/cgroup.controllers"));
      v2_subtree = split_words(read_text_file(v2_dir + "/cgroup.subtree_control"));
    }
  }
  const bool v2_is_root = own.v2_path == "/";
  v2["own_dir"] = v2_dir.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v2_dir);
  v2["controllers"] = v2_controllers;
  v2["subtree_control"] = v2_subtree;
  v2["can_create_child"] = can_create_child(v2_dir);
  v2["can_move_processes"] = !v2_dir.empty() && can_write(v2_dir + "/cgroup.procs");
  v2["can_enable_controllers"] = !v2_dir.empty() && can_write(v2_dir + "/cgroup.subtree_control");
  v2["own_cgroup_is_root"] = v2_is_root;
  check.facts["v2"] = v2;

  // For each controller jail wants: the hierarchy it is bound to, and whether the caller can make
  // the tool's cgroup under its own cgroup there.
  nlohmann::ordered_json usable = nlohmann::ordered_json::object();
  std::vector<std::string> lacking_required;
  std::vector<std::string> lacking;
  std::vector<std::string> unbound;    // in no hierarchy the caller can see
  std::vector<std::string> read_only;  // there, but the caller may not create a cgroup
  std::vector<std::string> in_v1;
  std::vector<std::string> in_v2;
  for (const std::string& controller : kWantedControllers) {
    nlohmann::ordered_json entry;
    std::string where = "none";
    std::string dir;
    if (v1_mount_of.count(controller) != 0 && own.v1_paths.count(controller) != 0) {
      where = "v1";
      dir = visible_dir(*v1_mount_of[controller], own.v1_paths.at(controller));
    } else if (contains(v2_controllers, controller)) {
      where = "v2";
      dir = v2_dir;
    }
    const bool writable = can_create_child(dir);
    entry["hierarchy"] = where;
    entry["dir"] = dir.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(dir);
    entry["can_create_child"] = writable;
    usable[controller] = entry;
    if (where == "none" || dir.empty()) {
      unbound.push_back(controller);
    } else if (!writable) {
      read_only.push_back(controller);
    } else {
      (where == "v1" ? in_v1 : in_v2).push_back(controller);
      continue;
    }
    lacking.push_back(controller);
    if (contains(kRequiredControllers, controller)) lacking_required.push_back(controller);
  }
  check.facts["controllers_for_jail"] = usable;

  std::string finding = layout;
  if (!v1_controllers.empty()) finding += "; v1: " + join(v1_controllers, " ");
  if (!v1_named.empty()) finding += " (+name=" + join(v1_named, ",name=") + ")";
  if (v2_mount != nullptr) {
    finding += "; v2 at " + v2_mount->mount_point + ", own cgroup " +
               (own.has_v2 ? own.v2_path : "?") + " has " +
               (v2_controllers.empty() ? "no controllers" : join(v2_controllers, " ")) +
               ", subtree_control " + (v2_subtree.empty() ? "empty" : join(v2_subtree, " "));
  }
  if (!unbound.empty()) finding += "; not available: " + join(unbound, " ");
  if (!read_only.empty()) {
    finding += "; uid " + std::to_string(geteuid()) +
               " may not create cgroups for: " + join(read_only, " ");
  }
  check.finding = finding;

  std::string plan;
  if (!in_v1.empty()) plan += "v1 " + join(in_v1, "/");
  if (!in_v2.empty()) plan += std::string(plan.empty() ? "" : " and ") + "v2 " + join(in_v2, "/");
  std::string meaning;
  if (layout == "none") {
    meaning = "no cgroup filesystem is mounted: jail cannot enforce memory, pids or cpu limits";
  } else {
    meaning = plan.empty() ? std::string("jail can use no controller")
                           : "jail uses " + plan + " controllers";
    if (layout == "hybrid") {
      meaning +=
          "; v2 " + std::string(v2_controllers.empty() ? "has no controllers"
                                                       : "has only " + join(v2_controllers, " "));
    }
    if (!in_v2.empty() && !v2_is_root) {
      // cgroup v2's no-internal-processes rule: a non-root cgroup that holds processes (the caller
      // does) cannot enable controllers for its children.
      meaning += "; in v2 jail must first move itself into a leaf of its own cgroup";
    }
  }
  if (!lacking_required.empty() && layout == "none") {
    check.status = Status::missing;  // the meaning above already says everything
  } else if (!lacking_required.empty()) {
    check.status = Status::missing;
    meaning += "; without " + join(lacking_required, " and ") +
               " it cannot limit a tool's memory or process count (runs that ask for limits "
               "fail)" +
               (read_only.empty() ? "" : "; delegate a cgroup to this user (chown) to get them");
  } else if (!lacking.empty()) {
    check.status = Status::limited;
    meaning += "; no " + join(lacking, " ") + " limits";
  } else {
    check.status = Status::ok;
  }
  check.meaning = meaning;
  return check;
}

}  // namespace jail::doctor
