// Parent side, root callers: host ids of the jail's own. Each concurrent jail of a root caller
// runs its tool as a host uid (and gid) no other jail and no user has: kFirstHostId + slot. A
// slot is held by an open-file-description lock on byte `slot` of kSlotsFile, so it is free
// again the moment the holder's last descriptor closes — when the jail ends, and when its
// process is SIGKILLed — with nothing to clean up and no daemon.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "unique_fd.hpp"

namespace jail {

// 2^31: above every id a distribution hands out to users or to systemd's dynamic and container
// ranges (which end below 2^31 - 2^28), below the invalid (uid_t)-1.
inline constexpr uid_t kFirstHostId = 0x80000000u;
inline constexpr std::uint32_t kSlots = 65536;
inline constexpr const char* kSlotsDir = "/run/jail";
inline constexpr const char* kSlotsFile = "/run/jail/id-slots";

class IdSlot {
 public:
  IdSlot() = default;
  IdSlot(UniqueFd lock, std::uint32_t slot) : lock_(std::move(lock)), slot_(slot) {}
  // The jail's host uid and gid.
  [[nodiscard]] uid_t host_id() const { return kFirstHostId + slot_; }
  [[nodiscard]] bool held() const { return lock_.valid(); }

 private:
  UniqueFd lock_;  // the lock's only descriptor: close-on-exec, never passed to the child
  std::uint32_t slot_ = 0;
};

// The lowest free slot whose id no entry of /etc/passwd, /etc/group, /etc/subuid or /etc/subgid
// uses. Throws jail::Error (step "id_slot") when the file cannot be used or every slot is taken.
[[nodiscard]] IdSlot take_id_slot();

}  // namespace jail
