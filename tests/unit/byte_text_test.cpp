// Names are bytes: what valid_utf8 lets through as a JSON string must be what a JSON library
// writes, and what printable passes to a terminal must show as itself.
#include "jail/byte_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(ByteText, Utf8IsReadAsStrictlyAsJsonWritesIt) {
  for (const std::string good : {"", "plain", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac",
                                 "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf" /* U+10FFFF */}) {
    EXPECT_TRUE(jail::valid_utf8(good)) << good;
  }
  for (const std::string bad :
       {"\xc0\x80" /* overlong NUL */, "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80" /* a surrogate */,
        "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80" /* above U+10FFFF */, "\xf5\x80\x80\x80", "\xff",
        "\xc3", "ab\xe6\x97"}) {
    EXPECT_FALSE(jail::valid_utf8(bad)) << nlohmann::json{jail::text_json(bad)}.dump();
    // What it said was UTF-8, nlohmann refused to write: such a name lost a dry run's session.
    const nlohmann::json kept = jail::text_json(bad);
    EXPECT_NO_THROW((void)kept.dump());
    EXPECT_EQ(jail::text_from(nlohmann::json::parse(kept.dump())), bad);
  }
}

TEST(ByteText, NothingPrintedHidesOrReordersText) {
  EXPECT_EQ(jail::printable("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");
  EXPECT_EQ(jail::printable("a\\x41"), "a\\\\x41");  // not to be read as the escape of 'A'
  EXPECT_EQ(jail::printable("a\nb\x1b[2J"), "a\\x0ab\\x1b[2J");
  EXPECT_EQ(jail::printable("\xc2\x9b"
                            "31m"),
            "\\xc2\\x9b31m");  // CSI, as C1
  // Zero width: "a\u200bb" printed as "ab", another name; right-to-left override: reordered.
  EXPECT_EQ(jail::printable("a\xe2\x80\x8b"
                            "b"),
            "a\\xe2\\x80\\x8bb");
  EXPECT_EQ(jail::printable("x\xe2\x80\xaetxt.exe"), "x\\xe2\\x80\\xaetxt.exe");
  EXPECT_EQ(jail::printable("\xef\xbb\xbfname"), "\\xef\\xbb\\xbfname");
  EXPECT_EQ(jail::printable("over\xc0\x80long"), "over\\xc0\\x80long");
}

}  // namespace
