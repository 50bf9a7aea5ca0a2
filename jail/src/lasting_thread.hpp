// Parent side: a thread that lasts as long as the process, for clones whose child must outlive
// the caller's thread. The kernel sends PR_SET_PDEATHSIG when the *thread* that cloned the child
// ends, not its process: a plugin host that launches a runsc jail from a pool thread or an
// std::async task, and waits for it elsewhere, would see runsc killed the moment that thread
// returned.
#pragma once

#include <functional>

namespace jail {

// Runs `call` on the lasting thread (started on first use, again in a forked child); `call`
// keeps what it needs (a pid, an errno) in what it captures. One call at a time; the caller
// waits for it. The thread blocks every signal, so that it never takes one meant for the host's
// own threads; a child cloned there inherits that mask and must set its own before it execs.
// Throws jail::Error if the thread cannot be started.
void on_lasting_thread(const std::function<void()>& call);

}  // namespace jail
