# jail_add_policy_loader(TARGET ROOT): builds the policy loader that runs first inside a gVisor
# sandbox (ROOT/jail/in_sandbox/load_policy.cpp) and adds its bytes to TARGET's sources
# (runsc/policy_loader.hpp), so that no installed file has to be found at run time. It is built
# freestanding and static with flags of its own — never the build's sanitizer, fuzzer or PIE
# flags, which need a C library it does not have. Used by libjail and by the fuzz build, which
# compiles libjail's sources again.
function(jail_add_policy_loader target root)
  set(loader ${CMAKE_CURRENT_BINARY_DIR}/load-policy)
  set(source ${root}/jail/in_sandbox/load_policy.cpp)
  add_custom_command(
    OUTPUT ${loader}
    COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -Os -Wall -Wextra -Werror -ffreestanding -nostdlib
            -static -fno-pie -fno-stack-protector -fno-exceptions -fno-rtti
            -fno-asynchronous-unwind-tables -fcf-protection=none -Wl,--build-id=none
            -Wl,-z,noexecstack -I${root}/jail/src -o ${loader} ${source}
    DEPENDS ${source} ${root}/jail/src/child/raw_syscall.hpp
    COMMENT "Building the in-sandbox policy loader"
    VERBATIM)
  set(bytes ${CMAKE_CURRENT_BINARY_DIR}/policy_loader_bytes.cpp)
  add_custom_command(
    OUTPUT ${bytes}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${loader} -DOUTPUT=${bytes} -DHEADER=runsc/policy_loader.hpp
            -DNAME=kPolicyLoaderProgram -P ${root}/cmake/embed_binary.cmake
    DEPENDS ${loader} ${root}/cmake/embed_binary.cmake
    VERBATIM)
  target_sources(${target} PRIVATE ${bytes})
endfunction()
