# Installing jail (`cmake --install build --prefix P`):
#   P/lib/libjail.a, P/lib/libjail_policies.a   the library and the policy compiler it links
#   P/lib/libjail_text.a                        fmt and spdlog as libjail was compiled with them
#   P/lib/libjail_egress_rules.a                the --net-allow entry checks libjail links
#   P/libexec/jail/jail-egress                  the egress proxy helper (installed by egress/)
#   P/include/jail/*.hpp                        the public headers, nothing of jail/src or policies/
#   P/lib/cmake/jail/                           find_package(jail): jail::jail, jail::cli
#   P/lib/pkgconfig/jail.pc                     pkg-config --cflags --libs jail
#   P/bin/jail                                  the executable (installed by runner/)
#   P/share/jail/policies/*.policy              the shipped seccomp policies, to read and diff
#   P/share/man/man1/jail.1                     the man page
# Everything is relocatable: the prefix is only chosen at install time.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Code in this tree (examples/) uses the names the installed package gives.
add_library(jail::jail ALIAS jail_core)
add_executable(jail::cli ALIAS jail)

set_target_properties(jail_core PROPERTIES EXPORT_NAME jail)
set_target_properties(jail_policies PROPERTIES EXPORT_NAME policies)
set_target_properties(jail_text PROPERTIES EXPORT_NAME text)
set_target_properties(jail_egress_rules PROPERTIES EXPORT_NAME egress_rules)
target_include_directories(jail_core INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# policies/ names its headers by their source path. libjail's public headers include none of them,
# so consumers of the installed package need none: they stay a build-tree-only path.
set_property(TARGET jail_policies PROPERTY INTERFACE_INCLUDE_DIRECTORIES
             $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/policies/include>)

install(TARGETS jail_core jail_policies jail_text jail_egress_rules EXPORT jailTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/jail/include/jail DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")

set(jail_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/jail)
set(JAIL_POLICY_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/jail/policies)
install(EXPORT jailTargets NAMESPACE jail:: DESTINATION ${jail_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/jailConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/jailConfig.cmake
  INSTALL_DESTINATION ${jail_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR JAIL_POLICY_INSTALL_DIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/jailConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/jailConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/jailConfigVersion.cmake
        DESTINATION ${jail_cmake_dir})

# pkg-config: the prefix is found from the .pc file's own place, so the package can be moved.
file(RELATIVE_PATH jail_pc_to_prefix /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" jail_pc_to_prefix "${jail_pc_to_prefix}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/jail.pc.in ${PROJECT_BINARY_DIR}/cmake/jail.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/jail.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

file(GLOB jail_shipped_policies ${PROJECT_SOURCE_DIR}/policies/shipped/*.policy)
install(FILES ${jail_shipped_policies} DESTINATION ${JAIL_POLICY_INSTALL_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/policies/LANGUAGE.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/docs/jail.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(CODE "
  set(JAIL_DESTDIR \"\$ENV{DESTDIR}\")
  set(JAIL_REAL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(JAIL_PREFIX \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(JAIL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/apparmor_profile.cmake\")
")

# Installed without debug info (cmake/strip_installed.cmake says why); after runner/ installed
# jail, as this file is included after add_subdirectory(runner).
install(CODE "
  set(JAIL_STRIP \"${CMAKE_STRIP}\")
  set(JAIL_OBJCOPY \"${CMAKE_OBJCOPY}\")
  set(JAIL_BUILT \"$<TARGET_FILE:jail>\")
  set(jail_prefix \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  set(JAIL_INSTALLED_BIN \"\${jail_prefix}/${CMAKE_INSTALL_BINDIR}/jail\")
  set(JAIL_INSTALLED_LIBS \"\${jail_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:jail_core>\"
      \"\${jail_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:jail_policies>\"
      \"\${jail_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:jail_text>\"
      \"\${jail_prefix}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:jail_egress_rules>\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/strip_installed.cmake\")
")
