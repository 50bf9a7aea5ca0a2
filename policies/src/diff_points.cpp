#include "diff_points.hpp"

#include "oci_conditions.hpp"

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

ArgPoints boundary_points(const std::vector<const Rule*>& a, const std::vector<const Rule*>& b,
                          std::size_t max_combinations) {
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
  while (points.combinations() > max_combinations) {
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

namespace {

constexpr std::size_t kMaxRegionTerms = 4096;

struct Region {
  Action action;
  std::vector<Conjunction> terms;  // union of conjunctions
};

void check_size(const std::vector<Conjunction>& terms) {
  if (terms.size() > kMaxRegionTerms) throw InexpressibleCondition("too many terms");
}

// Where each rule (first match) and the default decide.
std::vector<Region> decision_regions(const std::vector<const Rule*>& rules,
                                     const Action& default_action) {
  std::vector<Region> out;
  std::vector<Conjunction> not_earlier = {{}};  // no earlier rule matched
  for (const Rule* r : rules) {
    if (!r->condition) {
      out.push_back(Region{r->action, not_earlier});
      return out;
    }
    std::vector<Conjunction> here = conjoin(not_earlier, to_dnf(*r->condition, false));
    check_size(here);
    out.push_back(Region{r->action, std::move(here)});
    not_earlier = conjoin(not_earlier, to_dnf(*r->condition, true));
    check_size(not_earlier);
  }
  out.push_back(Region{default_action, std::move(not_earlier)});
  return out;
}

// A point of a satisfiable conjunction: its first libseccomp-shaped rule, each comparison an
// equality block or an inequality, met by the block's value or the value next to the one
// excluded.
std::optional<Args> witness(const Conjunction& c) {
  for (const Conjunction& rule : as_seccomp_rules(c, Ranges::as_masked_blocks)) {
    Args args{};
    for (const ArgCmp& cmp : rule) {
      const std::size_t i = static_cast<std::size_t>(cmp.arg);
      args[i] = cmp.op == CmpOp::ne ? cmp.value + 1 : cmp.value;
    }
    const bool met = std::all_of(c.begin(), c.end(), [&](const ArgCmp& cmp) {
      return holds(cmp, args[static_cast<std::size_t>(cmp.arg)]);
    });
    if (met) return args;
  }
  return std::nullopt;
}

// A point in each region where `a` decides one way and `b` another, for the pairs of decisions
// `wanted` picks.
template <typename Wanted>
std::optional<std::vector<Args>> witnesses(const std::vector<const Rule*>& a,
                                           const Action& default_a,
                                           const std::vector<const Rule*>& b,
                                           const Action& default_b, Wanted wanted) {
  try {
    std::vector<Args> out;
    const std::vector<Region> ra = decision_regions(a, default_a);
    const std::vector<Region> rb = decision_regions(b, default_b);
    for (const Region& x : ra) {
      for (const Region& y : rb) {
        if (!wanted(x.action, y.action)) continue;
        const std::vector<Conjunction> both = conjoin(x.terms, y.terms);
        check_size(both);
        for (const Conjunction& term : both) {
          std::optional<Args> point = witness(term);
          if (!point) return std::nullopt;  // cannot vouch for this region
          out.push_back(*point);
        }
      }
    }
    return out;
  } catch (const InexpressibleCondition&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<Args>> disagreement_witnesses(const std::vector<const Rule*>& a,
                                                        const Action& default_a,
                                                        const std::vector<const Rule*>& b,
                                                        const Action& default_b) {
  return witnesses(a, default_a, b, default_b,
                   [](const Action& x, const Action& y) { return !(x == y); });
}

std::optional<std::vector<Args>> witnesses_where(const std::vector<const Rule*>& a,
                                                 const Action& default_a,
                                                 const std::vector<const Rule*>& b,
                                                 const Action& default_b, const Action& b_action) {
  return witnesses(a, default_a, b, default_b,
                   [&](const Action&, const Action& y) { return y == b_action; });
}

}  // namespace jail::policy::detail
