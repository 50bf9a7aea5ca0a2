// libFuzzer target: the policy parser on arbitrary text. It must never crash, hang or trip a
// sanitizer; every diagnostic about the fuzzed file must point inside it (line within the
// text, column within that line, the quoted line being that line); a policy it accepts must
// compile to BPF and survive lint and explain.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "policy/compile.hpp"
#include "policy/diagnostics.hpp"
#include "policy/policy.hpp"
#include "policy/tools.hpp"

namespace {

constexpr const char* kName = "fuzz.policy";

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

[[noreturn]] void bad(const jail::policy::Diagnostic& d, const char* why) {
  std::fprintf(stderr, "invalid diagnostic position (%s): %s:%d:%d: %s\n", why,
               d.where.file.c_str(), d.where.line, d.where.column, d.message.c_str());
  std::abort();
}

void check_positions(std::string_view text, const std::vector<jail::policy::Diagnostic>& ds) {
  const std::vector<std::string_view> lines = lines_of(text);
  for (const auto& d : ds) {
    (void)jail::policy::format(d);
    if (d.where.file != kName) continue;  // from an included shipped policy
    if (d.where.line < 0 || d.where.column < 0) bad(d, "negative");
    if (d.where.line == 0) continue;  // about no line (the architecture check)
    if (static_cast<std::size_t>(d.where.line) > lines.size()) bad(d, "line past the end");
    const std::string_view line = lines[static_cast<std::size_t>(d.where.line) - 1];
    if (d.where.column < 1) bad(d, "column 0 on a line");
    // One past the last character is where "unexpected end of line" points.
    if (static_cast<std::size_t>(d.where.column) > line.size() + 1) bad(d, "column past the line");
    if (!d.source_line.empty() && d.source_line != line) bad(d, "quoted line is another line");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Includes resolve against a directory that does not exist: only shipped names load.
  const auto result = jail::policy::try_parse_policy(text, kName, "/nonexistent/jail-fuzz");
  check_positions(text, result.diagnostics);
  if (result.policy) {
    if (jail::policy::has_errors(result.diagnostics)) {
      std::fprintf(stderr, "a policy came back together with errors\n");
      std::abort();
    }
    try {
      (void)jail::policy::compile(*result.policy, jail::policy::Routing::direct);
    } catch (const std::exception&) {
      // A compile refusal (too many rules, an inexpressible condition) is a message, not a crash.
    }
    (void)jail::policy::lint(*result.policy);
    (void)jail::policy::explain_text(*result.policy, {});
  }
  return 0;
}
