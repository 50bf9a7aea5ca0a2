// Credential stores inside a bind are masked by default: a fake $HOME project with an ssh key, a
// .netrc and cloud credentials, bound in whole, shows the tool none of them — each is an empty
// read-only entry — and the status JSON lists what was hidden. --unmask shows one on purpose.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Secrets : public CallerTest {};

TEST_P(Secrets, CredentialStoresInABindAreMasked) {
  TempDir home;
  std::filesystem::create_directories(home / ".ssh");
  std::filesystem::create_directories(home / ".config/gcloud");
  write_file(home / ".ssh/id_ed25519", "PRIVATE KEY\n", 0600);
  write_file(home / ".netrc", "machine example.org password hunter2\n", 0600);
  write_file(home / ".config/gcloud/credentials.db", "gcloud token\n", 0600);
  write_file(home / "notes", "plain\n");
  TempDir work;
  const std::string status = work / "status.json";
  const RunResult r = run(
      {"--no-cwd", "--status-file", status, "--bind", home.path() + ":/home/u", "--", "sh", "-c",
       "cat /home/u/.ssh/id_ed25519 /home/u/.netrc /home/u/.config/gcloud/credentials.db "
       "/home/u/notes; ls -A /home/u/.ssh; echo new > /home/u/.ssh/planted; echo plant=$?"});
  EXPECT_EQ(r.out.find("PRIVATE KEY"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("gcloud token"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("plain\n"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("plant=0"), std::string::npos) << describe(r);
  EXPECT_FALSE(std::filesystem::exists(home / ".ssh/planted"));
  EXPECT_EQ(read_file(home / ".netrc"),
            std::optional<std::string>("machine example.org password hunter2\n"));
  const auto json = nlohmann::json::parse(read_file(status).value_or("{}"), nullptr, false);
  EXPECT_EQ(json.value("masked", nlohmann::json::array()),
            nlohmann::json::array({home / ".ssh", home / ".config/gcloud", home / ".netrc"}))
      << json.dump();

  const RunResult shown = run({"--no-cwd", "--unmask", home / ".netrc", "--bind",
                               home.path() + ":/home/u", "--", "cat", "/home/u/.netrc"});
  EXPECT_EQ(shown.exit_code, 0) << describe(shown);
  EXPECT_EQ(shown.out, "machine example.org password hunter2\n") << describe(shown);
}

JAIL_INSTANTIATE_FOR_CALLERS(Secrets);

}  // namespace
}  // namespace jail_test
