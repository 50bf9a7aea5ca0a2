// Host side: command-line parsing (CLI11) and the checks of the two descriptors jail passes.
#include "options.hpp"

#include <fcntl.h>
#include <sys/socket.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>

#include "setup_error.hpp"

namespace jail::egress {

namespace {

int socket_option(int fd, int option, const std::string& flag) {
  int value = 0;
  socklen_t size = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, option, &value, &size) != 0) {
    throw system_error(flag + " " + std::to_string(fd) + " is no socket");
  }
  return value;
}

void check_listener(int fd) {
  if (socket_option(fd, SO_TYPE, "--listen-fd") != SOCK_STREAM ||
      socket_option(fd, SO_ACCEPTCONN, "--listen-fd") != 1) {
    throw SetupError("--listen-fd " + std::to_string(fd) + " is no listening TCP socket");
  }
  // A connection reset between poll and accept would otherwise block the accept loop.
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw system_error("making --listen-fd " + std::to_string(fd) + " non-blocking");
  }
}

void check_report_socket(int fd) {
  if (socket_option(fd, SO_DOMAIN, "--report-fd") != AF_UNIX ||
      socket_option(fd, SO_TYPE, "--report-fd") != SOCK_STREAM) {
    throw SetupError("--report-fd " + std::to_string(fd) + " is no AF_UNIX stream socket");
  }
}

}  // namespace

Options parse_options(int argc, char** argv) {
  CLI::App app{"jail-egress: the --net-allow proxy jail starts on the host side of a tool"};
  Options options;
  bool allow_private = false;
  std::vector<std::string> entries;
  app.add_option("--listen-fd", options.listen_fd, "a listening TCP socket to accept the tool on")
      ->required();
  app.add_option("--report-fd", options.report_fd, "an AF_UNIX stream socket to report to")
      ->required();
  app.add_option("--uid", options.uid, "the uid to run as (required as root)");
  app.add_option("--gid", options.gid, "the gid to run as (required as root)");
  app.add_flag("--allow-private", allow_private, "reach private and shared address ranges");
  app.add_option("--allow", entries, "NAME[:PORT], *.NAME[:PORT], an IP address or a CIDR range")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& error) {
    throw SetupError(error.what());
  }
  options.private_ranges = allow_private ? PrivateRanges::allowed : PrivateRanges::refused;
  for (const std::string& entry : entries) {
    try {
      options.entries.push_back(parse_allow_entry(entry));
    } catch (const EntryError& error) {
      throw SetupError(error.what());
    }
  }
  check_listener(options.listen_fd);
  check_report_socket(options.report_fd);
  return options;
}

}  // namespace jail::egress
