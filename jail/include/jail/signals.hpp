// The signals the `jail` command passes on to its tool when it receives them; none of them ends
// jail itself, so jail always gets to clean up and report. (Process::kill delivers any signal.)
#pragma once

#include <csignal>

namespace jail {

inline constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                            SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ};

}  // namespace jail
