// The address guard: every refused range, the embedded-IPv4 forms, and --allow-private.
#include "egress/address_guard.hpp"

#include <gtest/gtest.h>

namespace jail::egress {
namespace {

std::optional<std::string> refusal(std::string_view text,
                                   PrivateRanges ranges = PrivateRanges::refused) {
  const auto refused = refusal_of(*parse_ip(text), ranges);
  if (!refused) return std::nullopt;
  return refused->reason;
}

// The refusal for `address` on port 443 with these allow-list entries.
std::optional<std::string> refusal_with(std::initializer_list<std::string_view> entries,
                                        std::string_view address,
                                        PrivateRanges ranges = PrivateRanges::refused) {
  std::vector<AllowEntry> parsed;
  for (const auto entry : entries) parsed.push_back(parse_allow_entry(entry));
  const auto refused = refusal_of(*parse_ip(address), 443, AllowList(parsed), ranges);
  if (!refused) return std::nullopt;
  return refused->reason;
}

TEST(AddressGuard, RefusesTheHostMetadataAndNonUnicastAlways) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"0.0.0.0", "0.0.0.0/8"},
      {"0.1.2.3", "0.0.0.0/8"},
      {"127.0.0.1", "loopback 127.0.0.0/8"},
      {"127.255.255.254", "loopback"},
      {"169.254.169.254", "169.254.0.0/16"},
      {"100.100.100.200", "metadata"},
      {"192.0.0.192", "metadata"},
      {"168.63.129.16", "Azure"},
      {"224.0.0.1", "multicast"},
      {"239.255.255.250", "multicast"},
      {"240.0.0.1", "reserved"},
      {"255.255.255.255", "broadcast"},
      {"::1", "loopback ::1"},
      {"::", "unspecified"},
      {"fe80::1", "link-local fe80::/10"},
      {"febf::1", "link-local"},
      {"fd00:ec2::254", "AWS"},
      {"ff02::1", "multicast ff00::/8"},
      {"2002:7f00:1::1", "6to4"},
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
      {"64:ff9b:1::7f00:1", "local-use NAT64"},
  };
  for (const auto& [address, expected] : cases) {
    for (const auto ranges : {PrivateRanges::refused, PrivateRanges::allowed}) {
      const auto reason = refusal(address, ranges);
      ASSERT_TRUE(reason.has_value()) << address;
      EXPECT_NE(reason->find(expected), std::string::npos) << address << ": " << *reason;
    }
  }
}

TEST(AddressGuard, RefusesPrivateAndSharedRangesUnlessAllowed) {
  for (const std::string_view address :
       {"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1",
        "100.127.255.255", "fc00::1", "fd12:3456::1"}) {
    EXPECT_TRUE(refusal(address).has_value()) << address;
    EXPECT_FALSE(refusal(address, PrivateRanges::allowed).has_value()) << address;
  }
}

TEST(AddressGuard, LetsPublicAddressesAndTestNetsThrough) {
  for (const std::string_view address :
       {"192.0.2.1", "198.51.100.7", "203.0.113.9", "93.184.216.34", "8.8.8.8", "172.32.0.1",
        "172.15.255.255", "100.128.0.1", "11.0.0.1", "2001:db8::1", "2606:4700::1111"}) {
    EXPECT_FALSE(refusal(address).has_value()) << address << ": " << *refusal(address);
  }
}

TEST(AddressGuard, JudgesIpv4MappedAndNat64ByTheirIpv4Address) {
  for (const std::string_view address :
       {"::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::127.0.0.1", "64:ff9b::a9fe:a9fe"}) {
    const auto reason = refusal(address, PrivateRanges::allowed);
    ASSERT_TRUE(reason.has_value()) << address;
    EXPECT_NE(reason->find("(as "), std::string::npos) << *reason;
  }
  EXPECT_TRUE(refusal("::ffff:10.1.2.3").has_value());
  EXPECT_FALSE(refusal("::ffff:10.1.2.3", PrivateRanges::allowed).has_value());
  EXPECT_FALSE(refusal("::ffff:192.0.2.1").has_value());
  EXPECT_FALSE(refusal("64:ff9b::c000:201").has_value());
}

TEST(AddressGuard, SaysWhichRangeInItsReason) {
  EXPECT_EQ(refusal("127.0.0.1"), "loopback 127.0.0.0/8");
  EXPECT_EQ(refusal("10.1.1.1"), "private 10.0.0.0/8");
}

TEST(AddressGuard, AnEntryNamingTheAddressOrANarrowerRangeOpensIt) {
  EXPECT_FALSE(refusal_with({"127.0.0.1:443"}, "127.0.0.1"));
  EXPECT_FALSE(refusal_with({"127.0.0.0/8"}, "127.0.0.1"));
  EXPECT_FALSE(refusal_with({"169.254.169.254"}, "169.254.169.254"));
  EXPECT_FALSE(refusal_with({"10.0.0.0/8"}, "10.1.2.3"));
  EXPECT_FALSE(refusal_with({"10.1.0.0/16"}, "10.1.2.3"));
  EXPECT_FALSE(refusal_with({"[fd00::/8]:443"}, "fd00::1"));
  EXPECT_FALSE(refusal_with({"::ffff:127.0.0.1"}, "::ffff:127.0.0.1"));
}

TEST(AddressGuard, AWiderRangeOrAnotherPortOpensNothing) {
  EXPECT_TRUE(refusal_with({"0.0.0.0/0"}, "127.0.0.1"));
  EXPECT_TRUE(refusal_with({"0.0.0.0/0"}, "169.254.169.254"));
  EXPECT_TRUE(refusal_with({"0.0.0.0/0"}, "10.1.2.3"));
  EXPECT_FALSE(refusal_with({"8.0.0.0/7"}, "9.0.0.1"));
  EXPECT_TRUE(refusal_with({"10.0.0.0/7"}, "10.1.2.3"));
  EXPECT_TRUE(refusal_with({"::/0"}, "::1"));
  EXPECT_TRUE(refusal_with({"::/0"}, "::ffff:127.0.0.1"));
  EXPECT_TRUE(refusal_with({"127.0.0.1:8080"}, "127.0.0.1"));
  EXPECT_TRUE(refusal_with({"127.0.0.1"}, "127.0.0.2"));
}

TEST(AddressGuard, AllowPrivateStillLeavesTheRestRefused) {
  EXPECT_FALSE(refusal_with({"example.com"}, "10.1.2.3", PrivateRanges::allowed));
  EXPECT_TRUE(refusal_with({"example.com"}, "127.0.0.1", PrivateRanges::allowed));
}

}  // namespace
}  // namespace jail::egress
