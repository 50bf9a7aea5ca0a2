// Parent side: turns the child's {step, errno, detail} record into a sentence that says what
// failed, on what, and what to do.
#pragma once

#include "child/report.hpp"
#include "jail/result.hpp"
#include "process_state.hpp"

namespace jail {

[[nodiscard]] SetupFailure describe_setup_failure(const child::Report& report,
                                                  const FailureContext& context);
// detail: the exec_failed report's (child::kExecCommandExists: the command is there, its
// interpreter or loader is not).
// "SRC is a symbolic link to T; jail does not follow …": why a bind whose `source` goes through a
// link is refused, naming the first link on the way and where it leads.
[[nodiscard]] std::string link_in_bind_source(const std::string& source);
[[nodiscard]] SetupFailure describe_exec_failure(int err, const FailureContext& context,
                                                 int detail = -1);

}  // namespace jail
