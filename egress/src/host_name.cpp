// Both sides: host name normalization and validation.
#include "egress/host_name.hpp"

#include <algorithm>

namespace jail::egress {

namespace {

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::string normalize_host_name(std::string_view name) {
  if (!name.empty() && name.back() == '.') name.remove_suffix(1);
  std::string lower(name);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

std::optional<std::string> host_name_problem(std::string_view name) {
  if (name.empty()) return "the host name is empty";
  if (!std::all_of(name.begin(), name.end(), is_name_character)) {
    return "a host name holds only letters, digits, '-' and '.'";
  }
  if (name.size() > 253) return "a host name is at most 253 characters long";
  std::string_view last_label;
  while (true) {
    const auto dot = name.find('.');
    const std::string_view label = name.substr(0, dot);
    if (label.empty()) return "a host name has no empty label (\"..\" or a leading '.')";
    if (label.size() > 63) return "each label of a host name is at most 63 characters long";
    if (label.front() == '-' || label.back() == '-') {
      return "a label of a host name neither starts nor ends with '-'";
    }
    last_label = label;
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  if (std::all_of(last_label.begin(), last_label.end(), is_digit)) {
    return "a host name does not end in a number (write a whole IPv4 address like 192.0.2.1)";
  }
  return std::nullopt;
}

}  // namespace jail::egress
