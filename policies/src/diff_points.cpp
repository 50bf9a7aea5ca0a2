#include "diff_points.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace jail::policy::detail {
namespace {

constexpr std::uint64_t kAll = ~std::uint64_t{0};
constexpr std::uint64_t kLow32 = 0xffffffffULL;
// Flag masks get pairwise unions and differences; cap the per-argument list so that stays small.
constexpr std::size_t kMaxPerArgument = 4096;

struct Atom {
  std::uint64_t mask, value;
};

void collect(const Condition& c, std::map<int, std::vector<Atom>>& atoms) {
  if (c.kind == Condition::Kind::compare) {
    atoms[c.arg].push_back(Atom{c.mask, c.value});
    return;
  }
  for (const auto& op : c.operands) collect(op, atoms);
}

// Every comparison (x & m) op v changes its answer only at v-1 | v | v+1 of the masked value,
// so those (with the unmasked bits clear and set) meet every region of a whole-value compare.
std::set<std::uint64_t> values_for(const std::vector<Atom>& atoms, bool& exact) {
  std::set<std::uint64_t> out{0, kAll};
  bool flag_masks = false;
  for (const Atom& a : atoms) {
    for (std::uint64_t base : {a.value - 1, a.value, a.value + 1, std::uint64_t{0}, a.mask}) {
      std::uint64_t b = base & a.mask;
      out.insert(b);
      out.insert(b | ~a.mask);
    }
    flag_masks = flag_masks || (a.mask != kAll && a.mask != kLow32);
  }
  // Different bit masks on one argument: their regions cross, so try unions and differences
  // of the values found so far (clone's namespace bits against CLONE_THREAD, say).
  if (flag_masks) {
    exact = false;
    std::vector<std::uint64_t> seed(out.begin(), out.end());
    for (std::size_t i = 0; i < seed.size() && out.size() < kMaxPerArgument; ++i)
      for (std::size_t j = i + 1; j < seed.size() && out.size() < kMaxPerArgument; ++j) {
        out.insert(seed[i] | seed[j]);
        out.insert(seed[i] & ~seed[j]);
        out.insert(seed[j] & ~seed[i]);
      }
  }
  return out;
}

}  // namespace

std::size_t ArgPoints::combinations() const {
  // Saturates just past the cap: six arguments of 4096 values each overflow 64 bits.
  std::size_t n = 1;
  for (const auto& v : values) {
    if (v.empty()) return 0;
    if (n > kMaxCombinations / v.size()) return kMaxCombinations + 1;
    n *= v.size();
  }
  return n;
}

ArgPoints boundary_points(const std::vector<const Rule*>& a, const std::vector<const Rule*>& b) {
  std::map<int, std::vector<Atom>> atoms;
  for (const auto* rules : {&a, &b})
    for (const Rule* r : *rules)
      if (r->condition) collect(*r->condition, atoms);
  ArgPoints points;
  for (const auto& [index, list] : atoms) {
    auto values = values_for(list, points.exact);
    points.indexes.push_back(index);
    points.values.emplace_back(values.begin(), values.end());
  }
  // Thin the longest list (keeping every other value, boundaries first) until the product fits.
  while (points.combinations() > kMaxCombinations) {
    auto longest =
        std::max_element(points.values.begin(), points.values.end(),
                         [](const auto& x, const auto& y) { return x.size() < y.size(); });
    points.exact = false;
    std::vector<std::uint64_t> kept;
    for (std::size_t i = 0; i < longest->size(); i += 2) kept.push_back((*longest)[i]);
    *longest = std::move(kept);
  }
  return points;
}

}  // namespace jail::policy::detail
