// Parent side: lets runsc start before its bundle exists. A Go binary of 24 MiB spends ~10 ms
// in its runtime and package initialisation before main() looks at anything; jail's own share
// of a start (compiling the policy, laying out the bundle: ~2-3 ms) runs in that time instead of
// before it.
//
// The gate is a FIFO passed as runsc's error log (`--log=PATH`): runsc opens that file for
// writing first thing in main(), before it reads the bundle, and opening a FIFO for writing
// blocks until it has a reader. open() gives it one, once the bundle is complete. (That runsc
// opens its log before it reads the bundle or its state root is checked by
// Runsc.RunscOpensItsLogBeforeItReadsTheBundle.)
#pragma once

#include <filesystem>
#include <string>

#include "unique_fd.hpp"

namespace jail {

class RunscStartGate {
 public:
  // Makes the FIFO at `path` (in the run's private directory). Throws jail::Error.
  explicit RunscStartGate(std::filesystem::path path);

  // runsc's flag that makes it wait at the gate.
  [[nodiscard]] std::string argument() const { return "--log=" + path_.string(); }

  // Lets the waiting runsc go on. The path is removed first, so that the gofer and the sandbox,
  // which runsc starts later with the same flag, make an ordinary (empty unless runsc fails)
  // log file there rather than wait at a gate nobody opens again. The FIFO is then opened for
  // reading through the fd kept since it was made, and that reader stays open as long as the
  // gate: a runsc that had found the path just before it went, and opens the FIFO only now,
  // must find a reader, or it would wait for ever. What runsc writes there (its error lines,
  // which go to stderr as well) is never read. Throws jail::Error; the caller then ends runsc,
  // which never got past the gate.
  void open();

  // What runsc's processes have logged since open() — runsc run's lines in the FIFO, its
  // gofer's and sandbox's in the plain file they made at the same path — up to `max` bytes.
  // Read once runsc has exited, to tell why it failed.
  [[nodiscard]] std::string take_written(std::size_t max = 64 * 1024);

 private:
  std::filesystem::path path_;
  UniqueFd fifo_;    // O_PATH until open(): no reader, so runsc waits
  UniqueFd reader_;  // after open()
};

}  // namespace jail
