# The version jail reports, from git: the newest vX.Y.Z tag reachable from HEAD, the commit, and
# whether the tree had uncommitted changes. Two uses:
#   include(cmake/version.cmake) before project(): sets JAIL_TAG_VERSION (X.Y.Z, or empty).
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -DFALLBACK_VERSION=... -P cmake/version.cmake, at every
#   build: writes a header defining JAIL_VERSION and JAIL_COMMIT, touched only when they change,
#   so a new commit is reported without reconfiguring and without rebuilding anything else.
# A tree without git (a source tarball) reports the version in CMakeLists.txt and commit "unknown".
if(NOT DEFINED SOURCE_DIR)
  set(SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
endif()
find_program(JAIL_GIT git)
set(jail_describe "")
if(JAIL_GIT AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${JAIL_GIT} -C ${SOURCE_DIR} describe --tags --match "v[0-9]*.[0-9]*.[0-9]*"
                          --abbrev=0
                  OUTPUT_VARIABLE jail_describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(JAIL_TAG_VERSION "")
if(jail_describe MATCHES "^v([0-9]+\\.[0-9]+\\.[0-9]+)$")
  set(JAIL_TAG_VERSION ${CMAKE_MATCH_1})
endif()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED OUTPUT)
  set(version ${FALLBACK_VERSION})
  if(JAIL_TAG_VERSION)
    set(version ${JAIL_TAG_VERSION})
  endif()
  set(commit "unknown")
  if(JAIL_GIT AND EXISTS ${SOURCE_DIR}/.git)
    execute_process(COMMAND ${JAIL_GIT} -C ${SOURCE_DIR} describe --tags --always --dirty --abbrev=12
                            --match "v[0-9]*.[0-9]*.[0-9]*" --long
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    # vX.Y.Z-N-gHASH[-dirty] after a tag, HASH[-dirty] without one.
    if(described MATCHES "-([0-9]+)-g([0-9a-f]+)(-dirty)?$")
      set(commit "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
      if(NOT CMAKE_MATCH_1 STREQUAL "0")
        set(version "${version}+${CMAKE_MATCH_1}")  # commits since the tag
      endif()
    elseif(described MATCHES "^([0-9a-f]+)(-dirty)?$")
      set(commit "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
    endif()
  endif()
  string(CONCAT text "// Written by cmake/version.cmake at build time.\n#pragma once\n"
           "#define JAIL_VERSION \"${version}\"\n#define JAIL_COMMIT \"${commit}\"\n")
  set(old "")
  if(EXISTS ${OUTPUT})
    file(READ ${OUTPUT} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${OUTPUT} "${text}")
  endif()
endif()
