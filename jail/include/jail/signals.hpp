// The signals a jail passes on to its tool. Sent to `jail` (or to Process::kill) they reach the
// tool; none of them ends jail itself, so jail always gets to clean up and report.
#pragma once

#include <csignal>

namespace jail {

inline constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                            SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ};

}  // namespace jail
