// Host side: whole writes and reads bounded by a deadline on blocking sockets.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>

namespace jail::egress {

using Clock = std::chrono::steady_clock;

// False when the peer is gone.
[[nodiscard]] bool send_all(int fd, std::string_view bytes);

enum class Wait { ready, timed_out, failed };

// Waits for `events` on fd until the deadline.
[[nodiscard]] Wait wait_for(int fd, short events, Clock::time_point deadline);

// Appends what fd has (at most `limit` bytes) to `buffer`; 0 at end of stream, -1 on error or
// when the deadline passes (errno ETIMEDOUT).
[[nodiscard]] ssize_t receive_into(int fd, std::string& buffer, std::size_t limit,
                                   Clock::time_point deadline);

// Ends our side after a final answer and reads what the peer still sends (briefly, and not
// much): closing with unread bytes sends a reset, which can make the peer lose the answer.
void finish_sending(int fd);

}  // namespace jail::egress
