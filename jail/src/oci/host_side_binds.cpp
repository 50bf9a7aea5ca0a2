#include "oci/host_side_binds.hpp"

#include <string>

#include "spec_check.hpp"

namespace jail::oci {

std::vector<bool> host_side_binds(const child::Plan& plan,
                                  const std::vector<OpDescription>& descriptions) {
  std::vector<bool> host_side(plan.op_count, false);
  std::vector<std::string> targets;
  targets.reserve(plan.op_count);
  for (std::size_t i = 0; i < plan.op_count; ++i)
    targets.push_back(normalize_jail_path(descriptions[i].target));
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    const child::MountOp& op = plan.ops[i];
    if (op.kind != child::OpKind::bind || !op.read_only || !op.allow_exec || op.allow_devices)
      continue;
    const std::string& target = targets[i];
    if (target.empty() || target == "/" || jail_path_within(target, "/dev")) continue;
    bool covered = false;
    for (std::size_t j = 0; j < i && !covered; ++j) {
      covered = plan.ops[j].kind != child::OpKind::mkdir && !host_side[j] &&
                (targets[j].empty() || jail_path_within(target, targets[j]));
    }
    host_side[i] = !covered;
  }
  return host_side;
}

}  // namespace jail::oci
