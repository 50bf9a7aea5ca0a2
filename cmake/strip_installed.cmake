# Run by `cmake --install` after the files are in place (cmake/install.cmake): the installed
# executable and archives carry no debug info, whatever the build type. A RelWithDebInfo install
# was 495 MB (a 184 MB jail, and 99 MB for a 34-line consumer of libjail.a). The executable's
# debug info is kept beside it in the build tree (jail.debug), named by a debug link, so gdb on
# the installed jail still finds it while that tree exists.
# In: JAIL_STRIP, JAIL_OBJCOPY, JAIL_BUILT (the built jail), JAIL_INSTALLED_BIN, JAIL_INSTALLED_LIBS.
if(NOT JAIL_STRIP OR NOT JAIL_OBJCOPY)
  message(WARNING "strip or objcopy not found: the installed files keep their debug info")
  return()
endif()
function(jail_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ARGN}: ${error}")
  endif()
endfunction()
set(debug_file ${JAIL_BUILT}.debug)
jail_run(${JAIL_OBJCOPY} --only-keep-debug ${JAIL_BUILT} ${debug_file})
jail_run(${JAIL_STRIP} --strip-all ${JAIL_INSTALLED_BIN})
jail_run(${JAIL_OBJCOPY} --add-gnu-debuglink=${debug_file} ${JAIL_INSTALLED_BIN})
foreach(archive ${JAIL_INSTALLED_LIBS})
  # Debug sections only: the archives' symbols are what a consumer links against.
  jail_run(${JAIL_STRIP} --strip-debug ${archive})
endforeach()
