// Parsing of --net-allow entries: every accepted form, and messages that say what to write.
#include "egress/allow_entry.hpp"

#include <gtest/gtest.h>

namespace jail::egress {
namespace {

std::string message_of(std::string_view text) {
  try {
    (void)parse_allow_entry(text);
  } catch (const EntryError& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(AllowEntry, ANameWithoutPortMeansHttpsAndHttp) {
  const AllowEntry entry = parse_allow_entry("API.Example.com.");
  EXPECT_EQ(entry.kind, EntryKind::name);
  EXPECT_EQ(entry.name, "api.example.com");
  EXPECT_EQ(entry.ports, (std::vector<std::uint16_t>{443, 80}));
}

TEST(AllowEntry, ANameWithAPort) {
  const AllowEntry entry = parse_allow_entry("pypi.org:8443");
  EXPECT_EQ(entry.name, "pypi.org");
  EXPECT_EQ(entry.ports, (std::vector<std::uint16_t>{8443}));
}

TEST(AllowEntry, AWildcardKeepsItsSuffix) {
  const AllowEntry entry = parse_allow_entry("*.Example.com:443");
  EXPECT_EQ(entry.kind, EntryKind::names_below);
  EXPECT_EQ(entry.name, "example.com");
}

TEST(AllowEntry, AnIpv4AddressIsAFullLengthRange) {
  const AllowEntry entry = parse_allow_entry("192.0.2.1:8080");
  EXPECT_EQ(entry.kind, EntryKind::address_range);
  EXPECT_EQ(entry.range.prefix_bits, 32);
  EXPECT_EQ(to_string(entry.range.base), "192.0.2.1");
  EXPECT_EQ(entry.ports, (std::vector<std::uint16_t>{8080}));
}

TEST(AllowEntry, Ipv6AddressesBracketedWithPortOrBare) {
  const AllowEntry bracketed = parse_allow_entry("[2001:db8::1]:443");
  EXPECT_EQ(bracketed.range.prefix_bits, 128);
  EXPECT_EQ(to_string(bracketed.range.base), "2001:db8::1");
  EXPECT_EQ(bracketed.ports, (std::vector<std::uint16_t>{443}));
  const AllowEntry bare = parse_allow_entry("2001:db8::1");
  EXPECT_EQ(bare.range.base, bracketed.range.base);
  EXPECT_EQ(bare.ports, (std::vector<std::uint16_t>{443, 80}));
  EXPECT_EQ(parse_allow_entry("[2001:db8::1]").ports, (std::vector<std::uint16_t>{443, 80}));
}

TEST(AllowEntry, CidrRangesInBothFamilies) {
  const AllowEntry v4 = parse_allow_entry("10.0.0.0/8:5432");
  EXPECT_EQ(v4.range.prefix_bits, 8);
  EXPECT_EQ(v4.ports, (std::vector<std::uint16_t>{5432}));
  const AllowEntry v6 = parse_allow_entry("[fd00::/8]:443");
  EXPECT_EQ(v6.range.prefix_bits, 8);
  EXPECT_EQ(parse_allow_entry("fd00::/8").range.prefix_bits, 8);
}

TEST(AllowEntry, ABadNameSaysWhatAHostNameHoldsAndWhatToWrite) {
  EXPECT_EQ(message_of("exa mple.com"),
            "--net-allow \"exa mple.com\": a host name holds only letters, digits, '-' and '.'; "
            "write NAME[:PORT], *.NAME[:PORT], an IP address or a CIDR range");
}

TEST(AllowEntry, RefusesWhatIsNoEntry) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"", "empty"},
      {"example.com:0", "not a number from 1 to 65535"},
      {"example.com:65536", "not a number from 1 to 65535"},
      {"example.com:http", "not a number from 1 to 65535"},
      {"example.com:", "port after ':' is missing"},
      {"*", "'*' stands only at the start"},
      {"*.", "empty"},
      {"a.*.example.com", "'*' stands only at the start"},
      {"example..com", "no empty label"},
      {".example.com", "no empty label"},
      {"-example.com", "neither starts nor ends with '-'"},
      {std::string_view("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com"),
       "at most 63"},
      {"10.1", "does not end in a number"},
      {"256.1.1.1", "does not end in a number"},
      {"10.0.0.1/8", "did you mean 10.0.0.0/8?"},
      {"10.0.0.0/33", "from 0 to 32"},
      {"[fd00::/129]:443", "from 0 to 128"},
      {"[2001:db8::1", "no matching ']'"},
      {"[2001:db8::1]x", "only \":PORT\" may follow ']'"},
      {"[example.com]:443", "only an IPv6 address or range"},
      {"2001:db8::zz", "is not an IP address"},
      {"example_com", "holds only letters"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = message_of(text);
    EXPECT_NE(message.find(expected), std::string::npos) << text << " -> " << message;
    EXPECT_TRUE(message.starts_with("--net-allow \"" + std::string(text) + "\": ")) << message;
  }
}

TEST(AllowEntry, ALongNameIsRefused) {
  std::string name;
  for (int i = 0; i < 50; ++i) name += "abcde.";
  name += "com";
  EXPECT_NE(message_of(name).find("at most 253"), std::string::npos);
}

TEST(AllowEntry, CheckThrowsTheSameError) {
  EXPECT_NO_THROW(check_allow_entry("example.com"));
  EXPECT_THROW(check_allow_entry("exa mple.com"), std::invalid_argument);
}

}  // namespace
}  // namespace jail::egress
