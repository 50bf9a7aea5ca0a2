# Run at install time (cmake/install.cmake): writes the AppArmor profile that lets the installed
# jail make user namespaces where Ubuntu (24.04 and later) restricts them
# (kernel.apparmor_restrict_unprivileged_userns = 1): without it jail's tools run in the Landlock
# mode there (docs/landlock.md). AppArmor loads profiles from /etc/apparmor.d only, so a system
# prefix (/usr, /usr/local) installs it there; any other prefix keeps it below itself, for a
# package to place. Load it with: sudo apparmor_parser -r /etc/apparmor.d/jail
# In: JAIL_PREFIX (the install prefix, DESTDIR included), JAIL_REAL_PREFIX (without DESTDIR),
# JAIL_DESTDIR, JAIL_BINDIR (relative).
if(JAIL_REAL_PREFIX STREQUAL "/usr" OR JAIL_REAL_PREFIX STREQUAL "/usr/local")
  set(profile_dir "${JAIL_DESTDIR}/etc/apparmor.d")
else()
  set(profile_dir "${JAIL_PREFIX}/etc/apparmor.d")
endif()
set(binary "${JAIL_REAL_PREFIX}/${JAIL_BINDIR}/jail")
file(MAKE_DIRECTORY "${profile_dir}")
file(WRITE "${profile_dir}/jail"
"# jail: let the installed jail make the user namespaces its tools run in.
# Ubuntu restricts unprivileged user namespaces to profiles that grant `userns`; without one,
# jail runs its tools in the Landlock mode (docs/landlock.md).
# Load: sudo apparmor_parser -r /etc/apparmor.d/jail
abi <abi/4.0>,
include <tunables/global>

profile jail ${binary} flags=(unconfined) {
  userns,

  include if exists <local/jail>
}
")
message(STATUS "Installing: ${profile_dir}/jail")
