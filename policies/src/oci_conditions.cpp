#include "oci_conditions.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

namespace jail::policy::detail {
namespace {

constexpr std::uint64_t kAll = ~std::uint64_t{0};
// A profile of this many rules for one syscall is no longer something a reviewer can read,
// and the product of larger unions grows without bound: refuse instead.
constexpr std::size_t kMaxConjunctions = 4096;

struct OpName {
  OciOp op;
  std::string_view name;
};
constexpr std::array<OpName, 7> kOps = {{{OciOp::ne, "SCMP_CMP_NE"},
                                         {OciOp::lt, "SCMP_CMP_LT"},
                                         {OciOp::le, "SCMP_CMP_LE"},
                                         {OciOp::eq, "SCMP_CMP_EQ"},
                                         {OciOp::ge, "SCMP_CMP_GE"},
                                         {OciOp::gt, "SCMP_CMP_GT"},
                                         {OciOp::masked_eq, "SCMP_CMP_MASKED_EQ"}}};

// {x : (x & mask) == value}: the set one MASKED_EQ describes.
struct Cube {
  std::uint64_t mask = 0;
  std::uint64_t value = 0;
};

std::optional<Cube> intersect(Cube a, Cube b) {
  if (((a.value ^ b.value) & a.mask & b.mask) != 0) return std::nullopt;
  return Cube{a.mask | b.mask, a.value | b.value};
}

// The smallest x ≥ lo in the cube. Either lo itself, or lo's bits above some position i, a
// 1 at i where lo has a 0, and the cube's fixed bits below; the lowest such i is smallest.
std::optional<std::uint64_t> next_in_cube(Cube c, std::uint64_t lo) {
  if ((lo & c.mask) == c.value) return lo;
  for (int i = 0; i < 64; ++i) {
    std::uint64_t bit = std::uint64_t{1} << i;
    if ((lo & bit) != 0) continue;
    if ((c.mask & bit) != 0 && (c.value & bit) == 0) continue;
    std::uint64_t above = i == 63 ? 0 : kAll << (i + 1);
    if ((lo & c.mask & above) != (c.value & above)) continue;
    return (lo & above) | bit | (c.value & (bit - 1));
  }
  return std::nullopt;
}

// [a, b] as aligned power-of-two blocks: (start, log2 size); 64 means everything.
std::vector<std::pair<std::uint64_t, int>> blocks(std::uint64_t a, std::uint64_t b) {
  std::vector<std::pair<std::uint64_t, int>> out;
  if (a == 0 && b == kAll) return {{0, 64}};
  while (true) {
    int k = 0;
    while (k < 63) {
      std::uint64_t size = std::uint64_t{1} << (k + 1);
      if ((a & (size - 1)) != 0 || b - a < size - 1) break;
      ++k;
    }
    out.emplace_back(a, k);
    std::uint64_t end = a + ((std::uint64_t{1} << k) - 1);
    if (end >= b) break;
    a = end + 1;
  }
  return out;
}

std::uint64_t low_bits(int k) {
  return k >= 64 ? kAll : (std::uint64_t{1} << k) - 1;
}

// The values of (x & mask) in [lo, hi] as cubes over x.
std::vector<Cube> interval_cubes(std::uint64_t mask, std::uint64_t lo, std::uint64_t hi) {
  std::vector<Cube> out;
  hi = std::min(hi, mask);
  if (lo > hi) return out;
  for (auto [start, k] : blocks(lo, hi)) {
    std::uint64_t m = mask & ~low_bits(k);
    if ((start & ~m) != 0) continue;  // no x reaches this block through the mask
    out.push_back(Cube{m, start});
  }
  return out;
}

CmpOp negated(CmpOp op) {
  switch (op) {
    case CmpOp::eq:
      return CmpOp::ne;
    case CmpOp::ne:
      return CmpOp::eq;
    case CmpOp::lt:
      return CmpOp::ge;
    case CmpOp::ge:
      return CmpOp::lt;
    case CmpOp::le:
      return CmpOp::gt;
    case CmpOp::gt:
      return CmpOp::le;
  }
  return op;
}

bool compare(std::uint64_t y, CmpOp op, std::uint64_t v) {
  switch (op) {
    case CmpOp::eq:
      return y == v;
    case CmpOp::ne:
      return y != v;
    case CmpOp::lt:
      return y < v;
    case CmpOp::le:
      return y <= v;
    case CmpOp::gt:
      return y > v;
    case CmpOp::ge:
      return y >= v;
  }
  return false;
}

bool direct(const ArgCmp& c) {
  return c.mask == kAll || c.op == CmpOp::eq;
}

// The cubes whose union is one comparison's set ({Cube{}} is everything, {} nothing).
std::vector<Cube> cubes_of(const ArgCmp& c) {
  std::uint64_t v = c.value;
  switch (c.op) {
    case CmpOp::eq:
      if ((v & ~c.mask) != 0) return {};
      return {Cube{c.mask, v}};
    case CmpOp::ne: {
      if ((v & ~c.mask) != 0) return {Cube{}};
      // Some bit under the mask differs from the value's.
      std::vector<Cube> out;
      for (int i = 0; i < 64; ++i) {
        std::uint64_t bit = std::uint64_t{1} << i;
        if ((c.mask & bit) != 0) out.push_back(Cube{bit, ~v & bit});
      }
      return out;
    }
    case CmpOp::lt:
      return v == 0 ? std::vector<Cube>{} : interval_cubes(c.mask, 0, v - 1);
    case CmpOp::le:
      return interval_cubes(c.mask, 0, v);
    case CmpOp::gt:
      return v == kAll ? std::vector<Cube>{} : interval_cubes(c.mask, v + 1, kAll);
    case CmpOp::ge:
      return interval_cubes(c.mask, v, kAll);
  }
  return {};
}

// Within the cube, the comparison either always holds, never holds, or depends on x.
std::optional<bool> decided_in(Cube cube, const ArgCmp& c) {
  std::uint64_t fixed = c.mask & cube.mask;
  bool conflict = ((cube.value ^ c.value) & fixed) != 0 || (c.value & ~c.mask) != 0;
  std::uint64_t lo = cube.value & c.mask, hi = lo | (c.mask & ~cube.mask);  // (x & mask) bounds
  switch (c.op) {
    case CmpOp::eq:
      if (conflict) return false;
      break;
    case CmpOp::ne:
      if (conflict) return true;
      break;
    case CmpOp::lt:
      if (hi < c.value) return true;
      if (lo >= c.value) return false;
      break;
    case CmpOp::le:
      if (hi <= c.value) return true;
      if (lo > c.value) return false;
      break;
    case CmpOp::gt:
      if (lo > c.value) return true;
      if (hi <= c.value) return false;
      break;
    case CmpOp::ge:
      if (lo >= c.value) return true;
      if (hi < c.value) return false;
      break;
  }
  if ((c.mask & ~cube.mask) != 0) return std::nullopt;
  return compare(lo, c.op, c.value);
}

// Disjoint cubes whose union is the part of `have` where the comparison holds. A point is
// cut out bit by bit, so excluding k values costs at most 64·k cubes, not 64^k.
std::vector<Cube> split(Cube have, const ArgCmp& c) {
  if (auto d = decided_in(have, c)) return *d ? std::vector<Cube>{have} : std::vector<Cube>{};
  std::vector<Cube> out;
  if (c.op == CmpOp::ne) {
    std::uint64_t free = c.mask & ~have.mask;
    Cube prefix = have;
    for (int i = 63; i >= 0; --i) {
      std::uint64_t bit = std::uint64_t{1} << i;
      if ((free & bit) == 0) continue;
      out.push_back(Cube{prefix.mask | bit, prefix.value | (~c.value & bit)});
      prefix = Cube{prefix.mask | bit, prefix.value | (c.value & bit)};
    }
    return out;
  }
  for (Cube piece : cubes_of(c))
    if (auto both = intersect(have, piece)) out.push_back(*both);
  return out;
}

struct Range {
  std::uint64_t lo = 0, hi = kAll;
  std::vector<std::uint64_t> excluded;
  bool empty = false;
};

// Full-width comparisons on one argument as an interval minus points.
Range range_of(const std::vector<ArgCmp>& cs) {
  Range r;
  for (const ArgCmp& c : cs) {
    switch (c.op) {
      case CmpOp::eq:
        r.lo = std::max(r.lo, c.value);
        r.hi = std::min(r.hi, c.value);
        break;
      case CmpOp::ne:
        r.excluded.push_back(c.value);
        break;
      case CmpOp::lt:
        if (c.value == 0) r.empty = true;
        r.hi = std::min(r.hi, c.value - 1);
        break;
      case CmpOp::le:
        r.hi = std::min(r.hi, c.value);
        break;
      case CmpOp::gt:
        if (c.value == kAll) r.empty = true;
        r.lo = std::max(r.lo, c.value + 1);
        break;
      case CmpOp::ge:
        r.lo = std::max(r.lo, c.value);
        break;
    }
  }
  if (r.lo > r.hi) r.empty = true;
  std::sort(r.excluded.begin(), r.excluded.end());
  r.excluded.erase(std::unique(r.excluded.begin(), r.excluded.end()), r.excluded.end());
  return r;
}

bool in_cube_and_range(Cube cube, const Range& r) {
  auto x = next_in_cube(cube, r.lo);
  while (x && *x <= r.hi) {
    if (!std::binary_search(r.excluded.begin(), r.excluded.end(), *x)) return true;
    if (*x == kAll) return false;
    x = next_in_cube(cube, *x + 1);
  }
  return false;
}

// Depth first over the cube unions of the masked comparisons; the first witness ends it.
bool search(Cube cube, const Range& r, const std::vector<ArgCmp>& masked, std::size_t i) {
  if (i == masked.size()) return in_cube_and_range(cube, r);
  for (Cube c : split(cube, masked[i]))
    if (search(c, r, masked, i + 1)) return true;
  return false;
}

bool satisfiable_one(const std::vector<ArgCmp>& cs) {
  Cube cube;
  std::vector<ArgCmp> full, masked;
  for (const ArgCmp& c : cs) {
    if (c.mask == kAll) {
      full.push_back(c);
    } else if (c.op == CmpOp::eq) {
      if ((c.value & ~c.mask) != 0) return false;
      auto both = intersect(cube, Cube{c.mask, c.value});
      if (!both) return false;
      cube = *both;
    } else {
      masked.push_back(c);
    }
  }
  Range r = range_of(full);
  return !r.empty && search(cube, r, masked, 0);
}

std::map<int, std::vector<ArgCmp>> by_arg(const Conjunction& c) {
  std::map<int, std::vector<ArgCmp>> out;
  for (const ArgCmp& a : c) out[a.arg].push_back(a);
  return out;
}

bool subset(Cube a, Cube b) {  // a ⊆ b
  return (b.mask & ~a.mask) == 0 && (a.value & b.mask) == b.value;
}

ArgCmp cube_cmp(int arg, Cube c) {
  return ArgCmp{arg, c.mask, CmpOp::eq, c.value};
}

// Alternatives for one argument, each a single comparison (nullopt: no comparison needed).
std::vector<std::optional<ArgCmp>> single_comparisons(int arg, const std::vector<ArgCmp>& cs,
                                                      Ranges ranges) {
  std::vector<std::optional<ArgCmp>> out;
  const bool blocks_only = ranges == Ranges::as_masked_blocks;
  const bool is_range = cs.front().op != CmpOp::eq && cs.front().op != CmpOp::ne;
  if (cs.size() == 1 && direct(cs.front()) && !(blocks_only && is_range)) return {cs.front()};
  bool all_full = std::all_of(cs.begin(), cs.end(), [](const ArgCmp& c) { return c.mask == kAll; });
  if (all_full) {
    Range r = range_of(cs);
    if (r.empty) return out;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
    std::uint64_t from = r.lo;
    bool open = true;
    for (std::uint64_t p : r.excluded) {
      if (p < from || p > r.hi) continue;
      if (p > from) pieces.emplace_back(from, p - 1);
      if (p == kAll || p + 1 > r.hi) {
        open = false;
        break;
      }
      from = p + 1;
    }
    if (open) pieces.emplace_back(from, r.hi);
    for (auto [a, b] : pieces) {
      if (a == b) {
        out.push_back(ArgCmp{arg, kAll, CmpOp::eq, a});
      } else if (a == 0 && b == kAll) {
        out.push_back(std::nullopt);
      } else if (a == 0 && !blocks_only) {
        out.push_back(ArgCmp{arg, kAll, CmpOp::le, b});
      } else if (b == kAll && !blocks_only) {
        out.push_back(ArgCmp{arg, kAll, CmpOp::ge, a});
      } else {
        for (Cube c : interval_cubes(kAll, a, b)) out.push_back(cube_cmp(arg, c));
      }
    }
    return out;
  }
  // Equalities first: they fix bits, and then most other comparisons are decided outright.
  std::vector<ArgCmp> ordered = cs;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const ArgCmp& c) { return c.op == CmpOp::eq; });
  std::vector<Cube> cubes = {Cube{}};
  for (const ArgCmp& c : ordered) {
    std::vector<Cube> next;
    for (Cube have : cubes)
      for (Cube piece : split(have, c)) next.push_back(piece);
    if (next.size() > kMaxConjunctions)
      throw InexpressibleCondition("the conditions on arg" + std::to_string(arg) +
                                   " need more than " + std::to_string(kMaxConjunctions) +
                                   " libseccomp rules");
    cubes = std::move(next);
  }
  // A cube inside another adds nothing to the union.
  std::vector<Cube> kept;
  for (std::size_t i = 0; i < cubes.size(); ++i) {
    bool inside = false;
    for (std::size_t j = 0; j < cubes.size() && !inside; ++j) {
      if (i == j || !subset(cubes[i], cubes[j])) continue;
      inside = !subset(cubes[j], cubes[i]) || j < i;  // of equal cubes keep the first
    }
    if (!inside) kept.push_back(cubes[i]);
  }
  for (Cube c : kept) {
    if (c.mask == 0) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(cube_cmp(arg, c));
    }
  }
  return out;
}

std::string number(std::uint64_t v) {
  if (v < 4096) return std::to_string(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string_view oci_op_name(OciOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "?";
}

std::optional<OciOp> parse_oci_op(std::string_view name) {
  for (const auto& o : kOps)
    if (o.name == name) return o.op;
  return std::nullopt;
}

ArgCmp from_oci(int arg, OciOp op, std::uint64_t value, std::uint64_t value_two) {
  switch (op) {
    case OciOp::masked_eq:
      // libseccomp masks the datum too: (arg & value) == (value_two & value). Bits of value_two
      // outside the mask are dropped there, not a condition that never holds.
      return ArgCmp{arg, value, CmpOp::eq, value_two & value};
    case OciOp::ne:
      return ArgCmp{arg, kAll, CmpOp::ne, value};
    case OciOp::lt:
      return ArgCmp{arg, kAll, CmpOp::lt, value};
    case OciOp::le:
      return ArgCmp{arg, kAll, CmpOp::le, value};
    case OciOp::ge:
      return ArgCmp{arg, kAll, CmpOp::ge, value};
    case OciOp::gt:
      return ArgCmp{arg, kAll, CmpOp::gt, value};
    case OciOp::eq:
      break;
  }
  return ArgCmp{arg, kAll, CmpOp::eq, value};
}

OciArg to_oci(const ArgCmp& c) {
  if (c.mask != kAll) return OciArg{OciOp::masked_eq, c.mask, c.value};
  switch (c.op) {
    case CmpOp::eq:
      return OciArg{OciOp::eq, c.value, 0};
    case CmpOp::ne:
      return OciArg{OciOp::ne, c.value, 0};
    case CmpOp::lt:
      return OciArg{OciOp::lt, c.value, 0};
    case CmpOp::le:
      return OciArg{OciOp::le, c.value, 0};
    case CmpOp::gt:
      return OciArg{OciOp::gt, c.value, 0};
    case CmpOp::ge:
      return OciArg{OciOp::ge, c.value, 0};
  }
  return OciArg{OciOp::eq, c.value, 0};
}

bool holds(const ArgCmp& c, std::uint64_t x) {
  return compare(x & c.mask, c.op, c.value);
}

bool satisfiable(const Conjunction& c) {
  for (const auto& [arg, cs] : by_arg(c))
    if (!satisfiable_one(cs)) return false;
  return true;
}

std::vector<Conjunction> conjoin(const std::vector<Conjunction>& a,
                                 const std::vector<Conjunction>& b) {
  std::vector<Conjunction> out;
  for (const Conjunction& x : a) {
    for (const Conjunction& y : b) {
      Conjunction z = x;
      for (const ArgCmp& c : y)
        if (std::find(z.begin(), z.end(), c) == z.end()) z.push_back(c);
      if (!satisfiable(z)) continue;
      out.push_back(std::move(z));
      if (out.size() > kMaxConjunctions)
        throw InexpressibleCondition("the conditions expand to more than " +
                                     std::to_string(kMaxConjunctions) + " libseccomp rules");
    }
  }
  return out;
}

std::vector<Conjunction> to_dnf(const Condition& c, bool negate) {
  switch (c.kind) {
    case Condition::Kind::compare: {
      Conjunction one = {ArgCmp{c.arg, c.mask, negate ? negated(c.op) : c.op, c.value}};
      if (!satisfiable(one)) return {};
      return {one};
    }
    case Condition::Kind::all_of:
    case Condition::Kind::any_of: {
      bool product = (c.kind == Condition::Kind::all_of) != negate;
      std::vector<Conjunction> out;
      if (product) out.push_back({});
      for (const Condition& op : c.operands) {
        auto sub = to_dnf(op, negate);
        if (product) {
          out = conjoin(out, sub);
        } else {
          out.insert(out.end(), sub.begin(), sub.end());
        }
      }
      return out;
    }
  }
  return {};
}

std::vector<Conjunction> as_seccomp_rules(const Conjunction& c, Ranges ranges) {
  std::vector<Conjunction> out = {{}};
  for (const auto& [arg, cs] : by_arg(c)) {
    std::vector<Conjunction> next;
    for (const auto& alt : single_comparisons(arg, cs, ranges)) {
      for (const Conjunction& have : out) {
        Conjunction z = have;
        if (alt) z.push_back(*alt);
        next.push_back(std::move(z));
      }
    }
    if (next.size() > kMaxConjunctions)
      throw InexpressibleCondition("the conditions expand to more than " +
                                   std::to_string(kMaxConjunctions) + " libseccomp rules");
    out = std::move(next);
  }
  return out;
}

std::string condition_text(const Conjunction& c) {
  std::string out;
  for (const ArgCmp& a : c) {
    if (!out.empty()) out += " && ";
    std::string arg = "arg" + std::to_string(a.arg);
    if (a.mask != kAll) arg = "(" + arg + " & " + number(a.mask) + ")";
    out += arg + " " + std::string(to_string(a.op)) + " " + number(a.value);
  }
  return out;
}

Condition to_condition(const ArgCmp& c) {
  Condition out;
  out.arg = c.arg;
  out.mask = c.mask;
  out.op = c.op;
  out.value = c.value;
  return out;
}

ArgCmp narrowed_to_32_bits(ArgCmp c) {
  c.mask &= 0xffffffffULL;
  c.value &= 0xffffffffULL;
  return c;
}

std::string why_not_32_bits(CmpOp op, std::uint64_t value) {
  const std::uint64_t high = value >> 32;
  const bool equality = op == CmpOp::eq || op == CmpOp::ne;
  if (high == 0 || (equality && high == 0xffffffffULL)) return {};
  auto hex = [](std::uint64_t v) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return std::string(text);
  };
  const std::string op_text(to_string(op));
  return "the kernel reads this argument as a 32-bit int, and " + op_text + " " + hex(value) +
         " does not fit in one: cut to its low 32 bits it would read " + op_text + " " +
         hex(value & 0xffffffffULL) + ", another condition; write a value within 0..0xffffffff" +
         (equality ? " (or a negative one, which is sign-extended)" : "");
}

}  // namespace jail::policy::detail
