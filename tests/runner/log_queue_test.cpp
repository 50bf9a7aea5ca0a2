// jail's messages never wait on their reader: a full pipe drops lines and counts them, says so
// once the reader reads again, and cannot hold up the exit.
#include "log_queue.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace jail::runner {
namespace {

using namespace std::chrono_literals;

struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read_end = fds[0];
      write_end = fds[1];
    }
  }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
  // Fills the pipe, leaving the write end blocking, as a stderr nobody reads is.
  void fill() const {
    ::fcntl(write_end, F_SETFL, O_NONBLOCK);
    const std::string chunk(4096, 'f');
    while (::write(write_end, chunk.data(), chunk.size()) > 0) {
    }
    ::fcntl(write_end, F_SETFL, 0);
  }
  // Everything written until the write end is closed.
  std::string read_all() const {
    std::string text;
    char buffer[65536];
    for (ssize_t n; (n = ::read(read_end, buffer, sizeof buffer)) > 0;)
      text.append(buffer, static_cast<std::size_t>(n));
    return text;
  }
};

TEST(LogQueue, LinesReachAReaderInOrder) {
  Pipe pipe;
  {
    LogQueue queue(pipe.write_end, true);
    pipe.write_end = -1;  // the queue's now
    for (int i = 0; i < 1000; ++i) {
      queue.push("line " + std::to_string(i) + "\n");
      queue.flush();
    }
    std::string all;
    std::thread reader([&] { all = pipe.read_all(); });
    queue.close(1s);
    reader.join();
    std::string want;
    for (int i = 0; i < 1000; ++i) want += "line " + std::to_string(i) + "\n";
    EXPECT_EQ(all, want);
    EXPECT_EQ(queue.dropped(), 0U);
  }
}

TEST(LogQueue, AFullPipeDropsAndCountsThenSaysSo) {
  Pipe pipe;
  pipe.fill();
  LogQueue queue(pipe.write_end, false);
  const std::string line(1000, 'x');
  // 1 MB of lines into a 256 KiB queue whose writer cannot write: push and flush return (a
  // blocking write would hang this test until ctest's timeout) and the rest is counted.
  for (int i = 0; i < 1000; ++i) {
    queue.push(line + "\n");
    queue.flush();
  }
  const std::uint64_t dropped = queue.dropped();
  EXPECT_GT(dropped, 700U);
  EXPECT_LT(dropped, 1000U);
  // The reader comes back: what was queued comes out, and the count with the next line.
  std::string all;
  std::thread reader([&] { all = pipe.read_all(); });
  queue.push("after\n");
  queue.close(5s);
  ::close(pipe.write_end);
  pipe.write_end = -1;
  reader.join();
  EXPECT_NE(all.find("jail: " + std::to_string(dropped) + " messages dropped"), std::string::npos)
      << all.substr(all.size() > 300 ? all.size() - 300 : 0);
  EXPECT_EQ(all.substr(all.size() - 6), "after\n");
}

TEST(LogQueue, AStalledReaderCannotHoldUpTheClose) {
  Pipe pipe;
  pipe.fill();
  LogQueue queue(pipe.write_end, false);
  queue.push("never read\n");
  // Returns after the patience without progress; without it this test hangs (ctest's timeout).
  queue.close(200ms);
  queue.push("after the close\n");
  EXPECT_EQ(queue.dropped(), 1U);
}

}  // namespace
}  // namespace jail::runner
