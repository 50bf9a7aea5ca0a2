#include "assembler.hpp"

#include <stdexcept>

namespace jail::policy::detail {

Assembler::Label Assembler::label() {
  bound_.push_back(kUnbound);
  return static_cast<Label>(bound_.size() - 1);
}

void Assembler::bind(Label l) {
  bound_.at(static_cast<std::size_t>(l)) = items_.size();
}

void Assembler::stmt(std::uint16_t code, std::uint32_t k) {
  Item it;
  it.insn = sock_filter{code, 0, 0, k};
  items_.push_back(it);
}

void Assembler::jump(std::uint16_t code, std::uint32_t k, Label jt, Label jf) {
  Item it;
  it.insn = sock_filter{code, 0, 0, k};
  it.jt = jt;
  it.jf = jf;
  items_.push_back(it);
}

void Assembler::jump_always(Label target) {
  Item it;
  it.insn = sock_filter{BPF_JMP | BPF_JA, 0, 0, 0};
  it.ja = target;
  items_.push_back(it);
}

std::vector<sock_filter> Assembler::finish() const {
  // Work on copies: inserting trampolines shifts positions, so labels stay symbolic (an index
  // into `bound`) until the very end, and `bound` is fixed up on every insertion.
  std::vector<Item> items = items_;
  std::vector<std::size_t> bound = bound_;
  for (std::size_t b : bound)
    if (b == kUnbound) throw std::logic_error("BPF assembler: a label was never bound");
  // Relax until every conditional offset fits in 8 bits. Each pass inserts at least one
  // trampoline or ends, and a program can only grow to a bounded size, so this terminates.
  for (;;) {
    bool changed = false;
    for (std::size_t i = 0; i < items.size() && !changed; ++i) {
      Item& it = items[i];
      if (it.jt < 0) continue;
      auto offset = [&](Label l) {
        std::size_t target = bound[static_cast<std::size_t>(l)];
        if (target <= i) throw std::logic_error("BPF assembler: backward jump");
        return target - i - 1;
      };
      bool far_t = offset(it.jt) > 255, far_f = offset(it.jf) > 255;
      if (!far_t && !far_f) continue;
      // Insert `ja target` right after the conditional and point the branch at it; a `ja`
      // carries a 32-bit offset.
      std::vector<Item> tramp;
      for (Label target : {far_t ? it.jt : -1, far_f ? it.jf : -1}) {
        if (target < 0) continue;
        // A jump to a `ret` is replaced by the `ret` itself: same size, one step less.
        std::size_t at = bound[static_cast<std::size_t>(target)];
        if (at < items.size() && BPF_CLASS(items[at].insn.code) == BPF_RET) {
          Item ret;
          ret.insn = items[at].insn;
          tramp.push_back(ret);
          continue;
        }
        Item ja;
        ja.insn = sock_filter{BPF_JMP | BPF_JA, 0, 0, 0};
        ja.ja = target;
        tramp.push_back(ja);
      }
      for (std::size_t& b : bound)
        if (b > i) b += tramp.size();
      std::size_t slot = i + 1;
      if (far_t) {
        bound.push_back(slot++);
        it.jt = static_cast<Label>(bound.size() - 1);
      }
      if (far_f) {
        bound.push_back(slot);
        it.jf = static_cast<Label>(bound.size() - 1);
      }
      items.insert(items.begin() + static_cast<std::ptrdiff_t>(i + 1), tramp.begin(), tramp.end());
      changed = true;
    }
    if (!changed) break;
  }
  std::vector<sock_filter> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    sock_filter f = items[i].insn;
    if (items[i].jt >= 0) {
      f.jt = static_cast<std::uint8_t>(bound[static_cast<std::size_t>(items[i].jt)] - i - 1);
      f.jf = static_cast<std::uint8_t>(bound[static_cast<std::size_t>(items[i].jf)] - i - 1);
    } else if (items[i].ja >= 0) {
      f.k = static_cast<std::uint32_t>(bound[static_cast<std::size_t>(items[i].ja)] - i - 1);
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace jail::policy::detail
