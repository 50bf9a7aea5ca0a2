// A caller started with fd 0, 1 or 2 closed (`jail … <&-`, a daemon that closed
// them). The next fd jail opens would take that number and be taken for stdio: the supervisor's
// signalfd became the stdin runsc's relay read (the tool got jail's signal records, a host pid
// among them), a pipe end became the tool's stdout. So such a slot is filled first.
#pragma once

namespace jail {

// Opens /dev/null on each of fds 0-2 that is closed (read-only for 0, write-only for 1 and 2),
// so the tool finds end of file there and its writes go nowhere, as after `<&- >&-` on any
// program that does the same. Throws jail::Error if /dev/null cannot be opened.
void occupy_closed_stdio();

}  // namespace jail
