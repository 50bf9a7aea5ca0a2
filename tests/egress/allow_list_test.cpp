// What the allow-list lets through: names by case and trailing dot, wildcards, ports, ranges.
#include "egress/allow_list.hpp"

#include <gtest/gtest.h>

namespace jail::egress {
namespace {

AllowList list_of(std::initializer_list<std::string_view> texts) {
  std::vector<AllowEntry> entries;
  for (const auto text : texts) entries.push_back(parse_allow_entry(text));
  return AllowList(std::move(entries));
}

IpAddress ip(std::string_view text) {
  return *parse_ip(text);
}

TEST(AllowList, NamesMatchWhateverTheirCaseAndTrailingDot) {
  const AllowList list = list_of({"api.example.com"});
  EXPECT_TRUE(list.allows_name("api.example.com", 443));
  EXPECT_TRUE(list.allows_name("API.EXAMPLE.COM.", 443));
  EXPECT_FALSE(list.allows_name("example.com", 443));
  EXPECT_FALSE(list.allows_name("x.api.example.com", 443));
  EXPECT_FALSE(list.allows_name("api.example.com.evil.org", 443));
}

TEST(AllowList, APortlessEntryOpensOnly443And80) {
  const AllowList list = list_of({"example.com"});
  EXPECT_TRUE(list.allows_name("example.com", 443));
  EXPECT_TRUE(list.allows_name("example.com", 80));
  EXPECT_FALSE(list.allows_name("example.com", 8080));
  EXPECT_FALSE(list.allows_name("example.com", 22));
}

TEST(AllowList, AnEntryWithAPortOpensThatPortOnly) {
  const AllowList list = list_of({"example.com:8443"});
  EXPECT_TRUE(list.allows_name("example.com", 8443));
  EXPECT_FALSE(list.allows_name("example.com", 443));
}

TEST(AllowList, AWildcardMatchesNamesBelowButNotTheNameItself) {
  const AllowList list = list_of({"*.example.com"});
  EXPECT_TRUE(list.allows_name("a.example.com", 443));
  EXPECT_TRUE(list.allows_name("A.B.Example.Com.", 80));
  EXPECT_FALSE(list.allows_name("example.com", 443));
  EXPECT_FALSE(list.allows_name("badexample.com", 443));
  EXPECT_FALSE(list.allows_name("a.example.com", 22));
}

TEST(AllowList, AddressesAndRangesByPort) {
  const AllowList list = list_of({"192.0.2.1:8080", "10.0.0.0/8", "[fd00::/8]:443"});
  EXPECT_TRUE(list.names_address(ip("192.0.2.1"), 8080));
  EXPECT_FALSE(list.names_address(ip("192.0.2.1"), 443));
  EXPECT_FALSE(list.names_address(ip("192.0.2.2"), 8080));
  EXPECT_TRUE(list.names_address(ip("10.255.1.2"), 80));
  EXPECT_FALSE(list.names_address(ip("11.0.0.1"), 80));
  EXPECT_TRUE(list.names_address(ip("fd12::1"), 443));
  EXPECT_FALSE(list.names_address(ip("fe00::1"), 443));
}

TEST(AllowList, NamesNeverMatchAddressEntriesNorTheOtherWayRound) {
  const AllowList list = list_of({"192.0.2.1", "example.com"});
  EXPECT_FALSE(list.allows_name("192.0.2.1", 443));
  EXPECT_FALSE(list.names_address(ip("93.184.216.34"), 443));
}

}  // namespace
}  // namespace jail::egress
