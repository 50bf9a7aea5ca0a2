// jail's logging options written before a subcommand ("jail -q commit ID", "jail -v --log-file
// F policy check P"): read off the front of argv, as git and systemctl take theirs, so a script
// can put its logging flags first whatever the subcommand.
#pragma once

#include <string>
#include <vector>

#include "logging.hpp"

namespace jail::runner {

struct LeadingOptions {
  std::vector<std::string> words;  // the option words as given ("-q", "--log-file", "F")
  LogOptions log;                  // what they say
  int next = 1;                    // argv index of the first word that is not one of them
};

// Reads -q/--quiet, -v/--verbose (and -vv…), --log-file F, --log-format text|json and --log-fd N
// (also as --opt=value) from argv[1] on, stopping at the first other word. A value that is
// missing or wrong stops it there too: the word is left for the subcommand's own parser, which
// names the problem.
[[nodiscard]] LeadingOptions read_leading_options(int argc, char** argv);

}  // namespace jail::runner
