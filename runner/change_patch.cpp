// A change set in git's patch format (what `git diff --binary --full-index` writes), so that
// `git apply` in a copy of the bound directory gives what `jail commit` writes there:
//
//   diff --git a/PATH b/PATH
//   new file mode 100644 | deleted file mode 100644 | old mode 100644 + new mode 100755
//   index <blob id>..<blob id>[ MODE]        git's blob id: SHA-1 of "blob <size>\0" + content
//   --- a/PATH, +++ b/PATH, then the hunks   a text file: `diff -u` of the raw bytes
//   GIT binary patch, literal N, …           a file with a NUL: deflated, base85, both ways
//
// A symlink is a "file" of mode 120000 whose content is its target. A name git would quote
// (control characters, '"', '\\', bytes past 0x7e) is C-quoted as git quotes it. What the format
// cannot hold is said on the notes stream instead, one line per path.
#include "change_patch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "jail/byte_text.hpp"
#include "jail/error.hpp"

extern char** environ;

namespace jail::runner {
namespace {

namespace dr = jail::dry_run;

constexpr const char* kNullBlob = "0000000000000000000000000000000000000000";
constexpr mode_t kGitFile = 0100644;
constexpr mode_t kGitExecutable = 0100755;
constexpr mode_t kGitSymlink = 0120000;

[[noreturn]] void fail(int err, const std::string& message) {
  throw Error("changes", err, message);
}

// `what`, then errno's text: errno read once, before anything could change it.
[[noreturn]] void fail_errno(const std::string& what) {
  const int err = errno;
  fail(err, fmt::format("{}: {}", what, std::strerror(err)));
}

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// As a commit reaches the host: never through a symlink, never out of the bound directory.
Fd open_root(const std::string& dir) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(O_PATH | O_DIRECTORY | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return Fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how)));
}

Fd open_beneath(int root, const std::string& relative, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const char* path = relative.empty() ? "." : relative.c_str();
  return Fd(static_cast<int>(::syscall(SYS_openat2, root, path, &how, sizeof how)));
}

std::string parent_of(const std::string& relative) {
  const auto slash = relative.rfind('/');
  return slash == std::string::npos ? "" : relative.substr(0, slash);
}

std::string name_of(const std::string& relative) {
  const auto slash = relative.rfind('/');
  return slash == std::string::npos ? relative : relative.substr(slash + 1);
}

std::string hex(const std::uint8_t* bytes, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

// git's quote_c_style with core.quotePath on (its default): the whole "a/…" in double quotes when
// any byte needs it, \a \b \t \n \v \f \r \" \\ by name and any other such byte in octal.
std::string git_quoted(const std::string& name) {
  auto must_quote = [](unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f; };
  if (std::none_of(name.begin(), name.end(),
                   [&](char c) { return must_quote(static_cast<unsigned char>(c)); })) {
    return name;
  }
  std::string out = "\"";
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (!must_quote(c)) {
      out += ch;
      continue;
    }
    out += '\\';
    switch (c) {
      case '\a':
        out += 'a';
        break;
      case '\b':
        out += 'b';
        break;
      case '\t':
        out += 't';
        break;
      case '\n':
        out += 'n';
        break;
      case '\v':
        out += 'v';
        break;
      case '\f':
        out += 'f';
        break;
      case '\r':
        out += 'r';
        break;
      case '"':
      case '\\':
        out += ch;
        break;
      default:
        out += fmt::format("{:03o}", c);
    }
  }
  return out + "\"";
}

// One side of a file's change: its content (a file's open descriptor, or a symlink's target) and
// what one pass over it found.
struct Side {
  bool exists = false;
  bool symlink = false;
  bool other = false;  // the host holds a directory or a device there now
  mode_t mode = 0;     // permission bits
  std::string shown;   // the host path, printable, for messages
  std::string link;    // a symlink's target
  Fd fd;               // a file's content
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string blob = kNullBlob;  // git's blob id
  std::string sha256;            // "sha256:<hex>", when the drift check needs it
  bool nul = false;              // a NUL anywhere: a binary file
  std::uint64_t lines = 0;
  bool final_newline = true;

  [[nodiscard]] mode_t git_mode() const {
    if (symlink) return kGitSymlink;
    return (mode & S_IXUSR) != 0 ? kGitExecutable : kGitFile;
  }
};

// Calls fn(data, size) for the side's bytes, in order. A file is read by offset, so each pass
// reads the same descriptor from its start.
template <typename Fn>
void each_chunk(const Side& side, Fn&& fn) {
  if (side.symlink) {
    if (!side.link.empty()) fn(side.link.data(), side.link.size());
    return;
  }
  std::vector<char> buffer(1 << 16);
  std::uint64_t offset = 0;
  while (offset < side.size) {
    const auto want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), side.size - offset));
    const ssize_t n = ::pread(side.fd.get(), buffer.data(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("cannot read " + side.shown);
    if (n == 0) fail(EAGAIN, fmt::format("{} was cut short while it was read", side.shown));
    fn(buffer.data(), static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void analyse(Side& side, bool want_sha256) {
  sha1_ctx sha1;
  sha1_init(&sha1);
  const std::string header = fmt::format("blob {}", side.size);
  sha1_update(&sha1, header.size() + 1, reinterpret_cast<const std::uint8_t*>(header.c_str()));
  sha256_ctx sha256;
  sha256_init(&sha256);
  char last = '\n';
  each_chunk(side, [&](const char* data, std::size_t size) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
    sha1_update(&sha1, size, bytes);
    if (want_sha256) sha256_update(&sha256, size, bytes);
    if (std::memchr(data, '\0', size) != nullptr) side.nul = true;
    side.lines += static_cast<std::uint64_t>(std::count(data, data + size, '\n'));
    last = data[size - 1];
  });
  if (last != '\n') {
    ++side.lines;
    side.final_newline = false;
  }
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha1_digest(&sha1, SHA1_DIGEST_SIZE, digest);
  side.blob = hex(digest, SHA1_DIGEST_SIZE);
  if (want_sha256) {
    sha256_digest(&sha256, SHA256_DIGEST_SIZE, digest);
    side.sha256 = "sha256:" + hex(digest, SHA256_DIGEST_SIZE);
  }
}

// A symlink's target, read through a descriptor of the link itself.
std::string read_link(int fd, const std::string& shown) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlinkat(fd, "", target.data(), target.size());
  if (n < 0) fail_errno("cannot read the symlink " + shown);
  target.resize(static_cast<std::size_t>(n));
  return target;
}

std::string range(std::uint64_t lines) {
  if (lines == 0) return "0,0";
  if (lines == 1) return "1";
  return fmt::format("1,{}", lines);
}

class Output {
 public:
  explicit Output(std::FILE* out) : out_(out) {}
  void put(std::string_view text) {
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), out_) != text.size()) failed();
  }
  void put(char c) {
    if (std::fputc(c, out_) == EOF) failed();
  }
  void finish() {
    if (std::fflush(out_) != 0) failed();
  }

 private:
  [[noreturn]] static void failed() { fail_errno("cannot write the patch"); }
  std::FILE* out_;
};

// Each line of the side prefixed with `mark`; git's marker after a last line with no newline.
void put_lines(Output& out, const Side& side, char mark) {
  bool at_start = true;
  each_chunk(side, [&](const char* data, std::size_t size) {
    std::size_t at = 0;
    while (at < size) {
      if (at_start) out.put(mark);
      const auto* newline = static_cast<const char*>(std::memchr(data + at, '\n', size - at));
      const std::size_t end =
          newline != nullptr ? static_cast<std::size_t>(newline - data) + 1 : size;
      out.put(std::string_view(data + at, end - at));
      at_start = newline != nullptr;
      at = end;
    }
  });
  if (!side.final_newline) out.put("\n\\ No newline at end of file\n");
}

// git's base85 alphabet (base85.c) and its line format: a length character ('A'-'Z': 1-26 bytes,
// 'a'-'z': 27-52), then each 4-byte group, zero-padded, as 5 characters, most significant first.
constexpr char kBase85[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

void put_base85_line(Output& out, const unsigned char* data, std::size_t size) {
  std::string line(
      1, size <= 26 ? static_cast<char>('A' + size - 1) : static_cast<char>('a' + size - 27));
  for (std::size_t at = 0; at < size; at += 4) {
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < 4; ++i) group = (group << 8) | (at + i < size ? data[at + i] : 0u);
    char digits[5];
    for (int i = 4; i >= 0; --i) {
      digits[i] = kBase85[group % 85];
      group /= 85;
    }
    line.append(digits, 5);
  }
  line += '\n';
  out.put(line);
}

// "literal SIZE", the side's bytes deflated (zlib) in base85 lines of 52 bytes, a blank line. An
// absent side is "literal 0".
void put_literal(Output& out, const Side& side) {
  constexpr std::size_t kLine = 52;
  out.put(fmt::format("literal {}\n", side.exists ? side.size : 0));
  z_stream stream{};
  if (deflateInit(&stream, Z_DEFAULT_COMPRESSION) != Z_OK) fail(ENOMEM, "cannot start zlib");
  std::string pending;
  unsigned char buffer[1 << 15];
  auto run = [&](int flush) {
    int result = Z_OK;
    do {
      stream.next_out = buffer;
      stream.avail_out = sizeof buffer;
      result = deflate(&stream, flush);
      if (result == Z_STREAM_ERROR) {
        deflateEnd(&stream);
        fail(EIO, "zlib failed to deflate " + side.shown);
      }
      pending.append(reinterpret_cast<const char*>(buffer), sizeof buffer - stream.avail_out);
    } while (stream.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END));
    std::size_t at = 0;
    for (; pending.size() - at >= kLine; at += kLine)
      put_base85_line(out, reinterpret_cast<const unsigned char*>(pending.data() + at), kLine);
    pending.erase(0, at);
  };
  if (side.exists) {
    each_chunk(side, [&](const char* data, std::size_t size) {
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      stream.avail_in = static_cast<uInt>(size);
      run(Z_NO_FLUSH);
    });
  }
  stream.next_in = nullptr;
  stream.avail_in = 0;
  run(Z_FINISH);
  deflateEnd(&stream);
  if (!pending.empty())
    put_base85_line(out, reinterpret_cast<const unsigned char*>(pending.data()), pending.size());
  out.put('\n');
}

// The environment for `diff`, with its messages ("\ No newline at end of file") in English.
std::vector<std::string> c_locale_environment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view kv = *entry;
    if (kv.starts_with("LC_") || kv.starts_with("LANG=") || kv.starts_with("LANGUAGE=")) continue;
    env.emplace_back(kv);
  }
  env.emplace_back("LC_ALL=C");
  return env;
}

// The hunks of two non-empty text files by diffutils' `diff -u` (Debian: essential), given
// their descriptors (as /dev/fd/3 and 4), its own ---/+++ lines left out.
void put_diff_hunks(Output& out, const Side& old_side, const Side& new_side) {
  const Fd old_copy(::fcntl(old_side.fd.get(), F_DUPFD_CLOEXEC, 10));
  const Fd new_copy(::fcntl(new_side.fd.get(), F_DUPFD_CLOEXEC, 10));
  int pipe_fds[2];
  if (!old_copy.valid() || !new_copy.valid() || ::pipe2(pipe_fds, O_CLOEXEC) != 0)
    fail_errno("cannot run diff");
  Fd reader(pipe_fds[0]);
  Fd writer(pipe_fds[1]);
  std::vector<std::string> env_storage = c_locale_environment();
  std::vector<char*> env;
  for (std::string& kv : env_storage) env.push_back(kv.data());
  env.push_back(nullptr);
  const char* argv[] = {"diff", "-a", "-u",        "--label",   "a",    "--label",
                        "b",    "--", "/dev/fd/3", "/dev/fd/4", nullptr};
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, writer.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, old_copy.get(), 3);
  ::posix_spawn_file_actions_adddup2(&actions, new_copy.get(), 4);
  pid_t pid = -1;
  const int spawned =
      ::posix_spawnp(&pid, "diff", &actions, nullptr, const_cast<char* const*>(argv), env.data());
  ::posix_spawn_file_actions_destroy(&actions);
  writer.reset();
  if (spawned != 0) {
    fail(spawned, fmt::format("cannot run diff for {}: {} (install diffutils)", new_side.shown,
                              std::strerror(spawned)));
  }
  int header_lines = 2;  // "--- a", "+++ b"
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(reader.get(), buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    std::string_view chunk(buffer, static_cast<std::size_t>(n));
    while (header_lines > 0 && !chunk.empty()) {
      const auto newline = chunk.find('\n');
      if (newline == std::string_view::npos) {
        chunk = {};
        break;
      }
      chunk.remove_prefix(newline + 1);
      --header_lines;
    }
    out.put(chunk);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // 1: the files differ, as they do here.
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
    fail(EIO, fmt::format("diff failed on {}", new_side.shown));
}

// One "diff --git" entry between two sides of one type (file or symlink), either of them absent.
void put_entry(Output& out, const std::string& path, const Side& old_side, const Side& new_side) {
  const std::string a = git_quoted("a/" + path);
  const std::string b = git_quoted("b/" + path);
  out.put(fmt::format("diff --git {} {}\n", a, b));
  if (!old_side.exists) {
    out.put(fmt::format("new file mode {:06o}\n", new_side.git_mode()));
  } else if (!new_side.exists) {
    out.put(fmt::format("deleted file mode {:06o}\n", old_side.git_mode()));
  } else if (old_side.git_mode() != new_side.git_mode()) {
    out.put(fmt::format("old mode {:06o}\nnew mode {:06o}\n", old_side.git_mode(),
                        new_side.git_mode()));
  }
  if (old_side.exists && new_side.exists && old_side.blob == new_side.blob) return;  // mode only
  out.put(fmt::format("index {}..{}", old_side.blob, new_side.blob));
  if (old_side.exists && new_side.exists && old_side.git_mode() == new_side.git_mode())
    out.put(fmt::format(" {:06o}", new_side.git_mode()));
  out.put('\n');
  if (old_side.nul || new_side.nul) {
    out.put("GIT binary patch\n");
    put_literal(out, new_side);
    put_literal(out, old_side);  // the reverse, for `git apply -R`
    return;
  }
  const bool old_text = old_side.exists && old_side.size > 0;
  const bool new_text = new_side.exists && new_side.size > 0;
  if (!old_text && !new_text) return;  // an empty file added or deleted: the header says it all
  // As git writes them: a name with a space ends with a tab, for patch(1).
  auto file_line = [](const char* marker, const std::string& name) {
    return fmt::format("{} {}{}\n", marker, name, name.find(' ') != std::string::npos ? "\t" : "");
  };
  out.put(file_line("---", old_side.exists ? a : "/dev/null"));
  out.put(file_line("+++", new_side.exists ? b : "/dev/null"));
  if (old_text && new_text && !old_side.symlink) {
    put_diff_hunks(out, old_side, new_side);
    return;
  }
  // One side empty (or a symlink's one line): one hunk of all of it, as git writes it.
  out.put(fmt::format("@@ -{} +{} @@\n", range(old_side.exists ? old_side.lines : 0),
                      range(new_side.exists ? new_side.lines : 0)));
  if (old_side.exists) put_lines(out, old_side, '-');
  if (new_side.exists) put_lines(out, new_side, '+');
}

// A file or symlink between its sides; a change of type is a deletion and a creation, as git
// writes one.
void put_change(Output& out, const std::string& path, const Side& old_side, const Side& new_side) {
  if (old_side.exists && new_side.exists && old_side.symlink != new_side.symlink) {
    put_entry(out, path, old_side, Side{});
    put_entry(out, path, Side{}, new_side);
    return;
  }
  if (old_side.exists && new_side.exists && old_side.blob == new_side.blob &&
      old_side.git_mode() == new_side.git_mode()) {
    return;  // a mode change git's format cannot say: noted by the caller
  }
  if (old_side.exists || new_side.exists) put_entry(out, path, old_side, new_side);
}

dr::EntryType entry_type(mode_t mode) {
  if (S_ISREG(mode)) return dr::EntryType::file;
  if (S_ISDIR(mode)) return dr::EntryType::directory;
  if (S_ISLNK(mode)) return dr::EntryType::symlink;
  return dr::EntryType::special;
}

class PatchWriter {
 public:
  PatchWriter(const dr::Session& session, const std::vector<dr::Change>& changes, std::FILE* out,
              std::FILE* notes)
      : session_(session), changes_(changes), out_(out), notes_(notes) {
    for (std::size_t layer = 0; layer < session.binds.size(); ++layer) {
      const std::string& host_dir = session.binds[layer].host_dir;
      Layer opened;
      opened.host = open_root(host_dir);
      if (!opened.host.valid()) fail_errno("cannot open " + printable(host_dir));
      // The layer's upper directory: where new_content_path() puts a path "" of it.
      dr::Change root;
      root.layer = layer;
      std::string upper = dr::new_content_path(session, root);
      while (upper.size() > 1 && upper.back() == '/') upper.pop_back();
      opened.upper = open_root(upper);
      if (!opened.upper.valid()) fail_errno("cannot open " + printable(upper));
      if (session.binds.size() > 1) {
        const auto start = host_dir.find_first_not_of('/');
        if (start != std::string::npos) opened.prefix = host_dir.substr(start) + "/";
      }
      layers_.push_back(std::move(opened));
    }
    for (const dr::Change& change : changes) {
      for (std::string dir = parent_of(change.relative);; dir = parent_of(dir)) {
        changed_below_.insert({change.layer, dir});
        if (dir.empty()) break;
      }
      if (change.kind == dr::ChangeKind::added || change.kind == dr::ChangeKind::deleted) {
        children_[{change.layer, parent_of(change.relative)}].emplace_back(
            name_of(change.relative), change.kind == dr::ChangeKind::added);
      }
    }
    // What `jail commit` would refuse as drift, said once: the patch's old side is the host now.
    for (const std::string& line : dr::drift(session, changes)) {
      notes_lines_.push_back(fmt::format(
          "jail: the host changed since the run: {}: the patch's old side is the host's copy "
          "now, and `jail commit` refuses it without --force",
          line));
    }
  }

  void write() {
    for (const dr::Change& change : changes_) write(change);
    out_.finish();
    for (const std::string& note : notes_lines_) fmt::print(notes_, "{}\n", note);
  }

 private:
  struct Layer {
    Fd host;
    Fd upper;
    std::string prefix;  // with several binds: the host directory less its "/", then "/"
  };

  void not_in_patch(const std::string& host_path, const std::string& why) {
    notes_lines_.push_back(
        fmt::format("jail: not in the patch: {} ({})", printable(host_path), why));
  }

  // A file or symlink of the host, as it is now (absent when it is gone; `other` when it is a
  // directory or a device now).
  Side host_side(std::size_t layer, const std::string& relative, const std::string& host_path) {
    Side side;
    side.shown = printable(host_path);
    const Fd entry = open_beneath(layers_[layer].host.get(), relative, O_PATH);
    struct stat info {};
    if (!entry.valid() || ::fstat(entry.get(), &info) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return side;
      fail_errno("cannot open " + side.shown);
    }
    if (!S_ISREG(info.st_mode) && !S_ISLNK(info.st_mode)) {
      side.other = true;
      return side;
    }
    fill(side, entry, info, relative, layers_[layer].host.get());
    return side;
  }

  // The new side, from the session's layer: a file with the mode the commit gives it.
  Side new_side(const dr::Change& change) {
    Side side;
    side.shown = printable(change.host_path);
    if (change.type == dr::EntryType::symlink) {
      side.exists = true;
      side.symlink = true;
      side.link = change.link_target;
      side.size = side.link.size();
      analyse(side, false);
      return side;
    }
    const Fd entry = open_beneath(layers_[change.layer].upper.get(), change.relative, O_PATH);
    struct stat info {};
    if (!entry.valid() || ::fstat(entry.get(), &info) != 0) {
      fail_errno(
          fmt::format("cannot open the new content of {} in session {}", side.shown, session_.id));
    }
    if (!S_ISREG(info.st_mode)) {
      fail(EAGAIN, fmt::format("the new content of {} in session {} is no longer a file (is the "
                               "tool still running?)",
                               side.shown, session_.id));
    }
    fill(side, entry, info, change.relative, layers_[change.layer].upper.get());
    side.mode = change.new_mode;
    analyse(side, false);
    return side;
  }

  // A file (opened again to read, and checked to be the same one: a fifo's open could block) or
  // a symlink, found by `entry` (O_PATH) at `relative` below `root`.
  void fill(Side& side, const Fd& entry, const struct stat& info, const std::string& relative,
            int root) {
    side.exists = true;
    side.mode = info.st_mode & 07777;
    side.mtime_ns =
        static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
    if (S_ISLNK(info.st_mode)) {
      side.symlink = true;
      side.link = read_link(entry.get(), side.shown);
      side.size = side.link.size();
      return;
    }
    side.fd = open_beneath(root, relative, O_RDONLY | O_NONBLOCK);
    struct stat again {};
    if (!side.fd.valid() || ::fstat(side.fd.get(), &again) != 0)
      fail_errno("cannot read " + side.shown);
    if (again.st_ino != info.st_ino || again.st_dev != info.st_dev)
      fail(EAGAIN, fmt::format("{} was replaced while it was read", side.shown));
    side.size = static_cast<std::uint64_t>(again.st_size);
  }

  std::string patch_path(std::size_t layer, const std::string& relative) const {
    return layers_[layer].prefix + relative;
  }

  void write(const dr::Change& change) {
    const bool has_old = change.kind != dr::ChangeKind::added;
    const bool has_new = change.kind != dr::ChangeKind::deleted;
    const dr::EntryType old_type = change.before.type;
    if ((has_old && old_type == dr::EntryType::special) ||
        (has_new && change.type == dr::EntryType::special)) {
      const char* why =
          has_new && change.type == dr::EntryType::special
              ? "a device, fifo or socket: not in git's format, and `jail commit` refuses it"
          : has_new ? "replaces a device, fifo or socket, which git's format cannot delete"
                    : "a device, fifo or socket deleted: git's format cannot delete one";
      not_in_patch(change.host_path, why);
      return;
    }
    Side old_side;
    if (has_old && old_type == dr::EntryType::directory) {
      if (dr::removes_tree(change)) write_removed_tree(change);
    } else {
      if (has_old) old_side = host_side(change.layer, change.relative, change.host_path);
      if (old_side.other) {
        not_in_patch(change.host_path,
                     "no longer a file or symlink on the host: changed since the run");
        return;
      }
      if (old_side.exists) analyse(old_side, false);
    }
    if (has_new && change.type == dr::EntryType::directory) {
      write_new_directory(change, old_type);
      put_change(out_, patch_path(change.layer, change.relative), old_side, Side{});
      return;
    }
    Side created;
    if (has_new) created = new_side(change);
    if (has_new && !created.symlink) {
      if (!change.hard_link_of.empty()) {
        not_in_patch(change.host_path,
                     fmt::format("a hard link to {}: the patch writes it as a copy of its own, "
                                 "as `jail commit` does",
                                 printable(change.hard_link_of)));
      }
      // `git apply` writes a file it patches with mode 0644 or 0755 (its umask permitting) and
      // leaves one it does not patch as it was.
      const bool patched = !old_side.exists || old_side.symlink || old_side.blob != created.blob ||
                           old_side.git_mode() != created.git_mode();
      const mode_t applied =
          patched ? (created.git_mode() == kGitExecutable ? 0755 : 0644) : old_side.mode;
      if (applied != change.new_mode) {
        not_in_patch(change.host_path,
                     fmt::format("mode {:04o}: git keeps only the executable bit; `git apply` "
                                 "leaves it {:04o}",
                                 change.new_mode, applied));
      }
    }
    put_change(out_, patch_path(change.layer, change.relative), old_side, created);
    if (change.kind == dr::ChangeKind::deleted) check_emptied(change);
  }

  // A directory is made by `git apply` as the files below it need it, with the mode its umask
  // gives (0755 here): an empty one, or one of another mode, is not in the patch.
  void write_new_directory(const dr::Change& change, dr::EntryType old_type) {
    const std::string shown = change.host_path + "/";
    if (change.kind != dr::ChangeKind::added && old_type == dr::EntryType::directory) {
      if (change.old_mode != change.new_mode) {
        not_in_patch(shown, fmt::format("directory mode {:04o} -> {:04o}: git keeps no directory "
                                        "modes",
                                        change.old_mode, change.new_mode));
      }
      return;
    }
    if (changed_below_.count({change.layer, change.relative}) == 0) {
      not_in_patch(shown, "an empty directory: git's format holds files and symlinks only");
    } else if (change.new_mode != 0755) {
      not_in_patch(shown, fmt::format("directory mode {:04o}: git keeps no directory modes, and "
                                      "`git apply` makes directories as its umask says",
                                      change.new_mode));
    }
  }

  // What a deleted (or replaced) directory takes with it: each file and symlink below it as a
  // deletion, the host's copy as the old side.
  void write_removed_tree(const dr::Change& change) {
    std::size_t total = 0;
    const std::vector<std::string> below =
        dr::entries_removed(session_, change, std::numeric_limits<std::size_t>::max(), total);
    std::set<std::string> holding;  // directories with something below them
    for (const std::string& entry : below) {
      for (std::string dir = parent_of(entry); !dir.empty(); dir = parent_of(dir))
        holding.insert(dir);
    }
    if (below.empty() && change.kind == dr::ChangeKind::deleted) {
      not_in_patch(change.host_path + "/",
                   "an empty directory: git's format holds files and symlinks only");
    }
    for (const std::string& entry : below) {
      const std::string relative = change.relative + "/" + entry;
      const std::string host_path = change.host_path + "/" + entry;
      const Fd opened = open_beneath(layers_[change.layer].host.get(), relative, O_PATH);
      struct stat info {};
      if (!opened.valid() || ::fstat(opened.get(), &info) != 0) {
        if (errno == ENOENT) continue;  // gone since it was listed: nothing left to delete
        fail_errno("cannot open " + printable(host_path));
      }
      switch (entry_type(info.st_mode)) {
        case dr::EntryType::directory:
          if (holding.count(entry) == 0) {
            not_in_patch(host_path + "/",
                         "an empty directory: git's format holds files and symlinks only");
          }
          continue;
        case dr::EntryType::special:
          not_in_patch(host_path, "a device, fifo or socket, which git's format cannot delete");
          continue;
        case dr::EntryType::file:
        case dr::EntryType::symlink:
          break;
      }
      Side old_side = host_side(change.layer, relative, host_path);
      if (old_side.other) {
        not_in_patch(host_path, "no longer a file or symlink on the host: changed since the run");
        continue;
      }
      if (old_side.exists) analyse(old_side, false);
      put_change(out_, patch_path(change.layer, relative), old_side, Side{});
    }
  }

  // The names a directory of the host holds after the commit: the host's now, less the
  // deletions of the change set, with its additions.
  const std::set<std::string>& names_after(std::size_t layer, const std::string& dir) {
    const auto cached = names_after_.find({layer, dir});
    if (cached != names_after_.end()) return cached->second;
    std::set<std::string> names;
    Fd opened = open_beneath(layers_[layer].host.get(), dir, O_RDONLY | O_DIRECTORY);
    if (opened.valid()) {
      if (DIR* listing = ::fdopendir(opened.get())) {
        (void)std::exchange(opened, Fd());  // closedir owns it now
        while (const dirent* entry = ::readdir(listing)) {
          const std::string name = entry->d_name;
          if (name != "." && name != "..") names.insert(name);
        }
        ::closedir(listing);
      }
    }
    const auto children = children_.find({layer, dir});
    if (children != children_.end()) {
      for (const auto& [name, added] : children->second) {
        if (added) {
          names.insert(name);
        } else {
          names.erase(name);
        }
      }
    }
    return names_after_[{layer, dir}] = std::move(names);
  }

  // `git apply` removes each directory a deletion leaves empty, and those above it it leaves
  // empty in turn; the commit keeps them.
  void check_emptied(const dr::Change& change) {
    std::string gone;  // a directory below `dir` that `git apply` removes
    for (std::string dir = parent_of(change.relative); !dir.empty(); dir = parent_of(dir)) {
      std::set<std::string> left = names_after(change.layer, dir);
      if (!gone.empty()) left.erase(gone);
      if (!left.empty()) return;
      if (emptied_.insert({change.layer, dir}).second) {
        not_in_patch(session_.binds[change.layer].host_dir + "/" + dir + "/",
                     "a directory the changes empty: `git apply` removes it, `jail commit` "
                     "keeps it");
      }
      gone = name_of(dir);
    }
  }

  const dr::Session& session_;
  const std::vector<dr::Change>& changes_;
  Output out_;
  std::FILE* notes_;
  std::vector<Layer> layers_;
  std::set<std::pair<std::size_t, std::string>> changed_below_;  // directories with a change below
  // (layer, directory) → its entries the change set adds (true) or deletes (false)
  std::map<std::pair<std::size_t, std::string>, std::vector<std::pair<std::string, bool>>>
      children_;
  std::map<std::pair<std::size_t, std::string>, std::set<std::string>> names_after_;
  std::set<std::pair<std::size_t, std::string>> emptied_;
  std::vector<std::string> notes_lines_;
};

}  // namespace

void write_git_patch(const dry_run::Session& session, const std::vector<dry_run::Change>& changes,
                     std::FILE* out, std::FILE* notes) {
  PatchWriter(session, changes, out, notes).write();
}

}  // namespace jail::runner
