// A classic-BPF assembler with symbolic forward labels. Conditional jumps in classic BPF
// reach at most 255 instructions ahead; the assembler inserts `ja` trampolines (32-bit
// offsets) where a target is further, so the code generator never counts instructions.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

namespace jail::policy::detail {

class Assembler {
 public:
  using Label = int;

  [[nodiscard]] Label label();
  void bind(Label l);                              // the next instruction emitted is l's target
  void stmt(std::uint16_t code, std::uint32_t k);  // loads, ALU, ret
  void jump(std::uint16_t code, std::uint32_t k, Label jt, Label jf);  // conditional
  void jump_always(Label target);                                      // BPF_JA

  // Resolves labels into offsets. Every label used must have been bound after its use.
  [[nodiscard]] std::vector<sock_filter> finish() const;

 private:
  struct Item {
    sock_filter insn{};
    Label jt = -1, jf = -1, ja = -1;
  };
  std::vector<Item> items_;
  std::vector<std::size_t> bound_;  // label → index of the instruction it names
  static constexpr std::size_t kUnbound = static_cast<std::size_t>(-1);
};

}  // namespace jail::policy::detail
