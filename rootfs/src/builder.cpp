#include "rootfs/builder.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "rootfs/elf.hpp"
#include "rootfs/resolver.hpp"

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

constexpr std::array kMountPoints = {"proc", "dev", "tmp"};

fs::path find_binary(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (!fs::exists(name)) throw BuildError(fmt::format("binary {} does not exist", name));
    return fs::absolute(name);
  }
  for (const char* dir :
       {"/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"}) {
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw BuildError(fmt::format(
      "binary '{}' is not on this host (searched /usr/local/bin /usr/bin /bin /usr/local/sbin "
      "/usr/sbin /sbin); give its path or install it",
      name));
}

class Builder {
 public:
  Builder(const BuildRequest& request) : out_(fs::absolute(request.out)) {}

  void prepare() {
    fs::create_directories(out_);
    // The host's merged-/usr links (/lib -> usr/lib …) are kept, so every path a binary or the
    // loader names resolves inside the root the same way it does on the host.
    for (const char* top : {"bin", "sbin", "lib", "lib32", "lib64", "libx32"}) {
      const fs::path host = fs::path("/") / top;
      if (fs::is_symlink(host)) {
        const fs::path link = fs::read_symlink(host);
        fs::create_directories(out_ / link.relative_path());
        if (!fs::exists(fs::symlink_status(out_ / top))) fs::create_symlink(link, out_ / top);
      }
    }
    for (const char* dir : kMountPoints) fs::create_directories(out_ / dir);
  }

  void add_binary(const std::string& name) {
    const fs::path path = find_binary(name);
    if (!read_elf(fs::canonical(path))) {
      throw BuildError(
          fmt::format("{} is not an ELF executable (a script? add its interpreter "
                      "as the binary and the script as a file)",
                      path.string()));
    }
    add_path(path, {});
  }

  void add_library(const std::string& soname) {
    const ElfInfo none;
    const auto found = resolver_.find(soname, "/", none, {});
    if (!found)
      throw BuildError(fmt::format("library {} (from the recipe) is not on this host", soname));
    add_path(*found, {});
  }

  void add_tree(const fs::path& tree) {
    if (!fs::is_directory(tree))
      throw BuildError(fmt::format("tree {} is not a directory", tree.string()));
    std::set<fs::path> entries;  // sorted: the same tree is built the same way every time
    for (const auto& entry : fs::recursive_directory_iterator(tree, fs::directory_options::none)) {
      entries.insert(entry.path());
    }
    fs::create_directories(out_ / tree.relative_path());
    for (const auto& entry : entries) {
      if (fs::is_directory(fs::symlink_status(entry))) {
        fs::create_directories(out_ / entry.relative_path());
      } else {
        add_path(entry, {});
      }
    }
  }

  void add_file(const fs::path& file) {
    if (!fs::exists(file)) throw BuildError(fmt::format("file {} does not exist", file.string()));
    add_path(fs::absolute(file), {});
  }

  void add_link(const std::string& where, const std::string& text) {
    const fs::path dest = out_ / fs::path(where).relative_path();
    fs::create_directories(dest.parent_path());
    if (fs::exists(fs::symlink_status(dest))) fs::remove(dest);
    fs::create_symlink(text, dest);
    ++report_.links;
  }

  void write_etc() {
    fs::create_directories(out_ / "etc");
    write(out_ / "etc/passwd",
          "root:x:0:0:root:/root:/usr/sbin/nologin\njail:x:1000:1000:jail:/tmp:/bin/sh\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    write(out_ / "etc/group", "root:x:0:\njail:x:1000:\nnogroup:x:65534:\n");
    write(out_ / "etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n");
    write(out_ / "etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n");
    // No ld.so.cache: every library sits in a directory the loader searches by default, or is
    // found through the RUNPATH it was found by.
  }

  [[nodiscard]] const BuildReport& report() const { return report_; }

 private:
  void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
    ++report_.files;
    report_.bytes += text.size();
  }

  // Copies `path` (a symlink is recreated and its target added too), then everything an ELF
  // file needs. `inherited_rpath` is the DT_RPATH of the objects that loaded this one.
  void add_path(const fs::path& path, const std::vector<std::string>& inherited_rpath) {
    const fs::path normal = path.lexically_normal();
    if (!done_.insert(normal).second) return;
    const fs::path dest = out_ / normal.relative_path();
    fs::create_directories(dest.parent_path());
    const auto status = fs::symlink_status(normal);
    if (fs::is_symlink(status)) {
      const fs::path text = fs::read_symlink(normal);
      if (!fs::exists(fs::symlink_status(dest))) fs::create_symlink(text, dest);
      ++report_.links;
      const fs::path target = text.is_absolute() ? text : normal.parent_path() / text;
      if (fs::exists(target)) add_path(target, inherited_rpath);
      return;
    }
    if (!fs::is_regular_file(status)) return;  // sockets, fifos, devices have no place here
    place(normal, dest);
    const auto info = read_elf(normal);
    if (info) add_dependencies(normal, *info, inherited_rpath);
  }

  void add_dependencies(const fs::path& object, const ElfInfo& info,
                        std::vector<std::string> rpath) {
    if (!info.interpreter.empty()) add_path(info.interpreter, {});
    if (info.runpath.empty()) {
      for (const auto& entry : info.rpath)
        rpath.push_back(expand_origin(entry, object.parent_path()));
    } else {
      rpath.clear();  // DT_RUNPATH stops the inheritance of DT_RPATH, as in ld.so
    }
    for (const auto& soname : info.needed) {
      const auto found = resolver_.find(soname, object, info, rpath);
      if (!found) {
        throw BuildError(fmt::format(
            "{} needs {}, which this host does not have (searched its RUNPATH/RPATH, "
            "/etc/ld.so.cache and the default directories); install it or drop the binary",
            object.string(), soname));
      }
      add_path(*found, rpath);
    }
  }

  // A reflink where the filesystem can (a private copy that costs nothing), else a hard link
  // (the same inode as the host's file; the root is mounted read-only by jail), else a copy.
  void place(const fs::path& source, const fs::path& dest) {
    std::error_code error;
    const auto size = fs::file_size(source, error);
    report_.bytes += error ? 0 : size;
    ++report_.files;
    if (fs::exists(fs::symlink_status(dest))) return;
    const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0)
      throw BuildError(fmt::format("cannot read {}: {}", source.string(), std::strerror(errno)));
    struct stat info {};
    ::fstat(in, &info);
    const int out =
        ::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, info.st_mode & 07777);
    bool shared = out >= 0 && ::ioctl(out, FICLONE, in) == 0;
    if (out >= 0) ::close(out);
    ::close(in);
    if (!shared) {
      fs::remove(dest, error);
      shared = ::link(source.c_str(), dest.c_str()) == 0;
    }
    if (shared) {
      ++report_.shared_with_host;
      return;
    }
    fs::copy_file(source, dest, fs::copy_options::overwrite_existing);
    fs::permissions(dest, static_cast<fs::perms>(info.st_mode & 07777));
  }

  fs::path out_;
  LibraryResolver resolver_;
  std::set<fs::path> done_;
  BuildReport report_;
};

}  // namespace

BuildReport build_rootfs(const BuildRequest& request) {
  if (request.out.empty()) throw BuildError("no output directory given");
  if (request.binaries.empty() && request.trees.empty() && request.files.empty()) {
    throw BuildError("nothing to put in the root: give --binary, --tree or --recipe");
  }
  try {
    Builder builder(request);
    builder.prepare();
    for (const auto& binary : request.binaries) builder.add_binary(binary);
    for (const auto& library : request.libraries) builder.add_library(library);
    for (const auto& tree : request.trees) builder.add_tree(tree);
    for (const auto& file : request.files) builder.add_file(file);
    for (const auto& [where, text] : request.links) builder.add_link(where, text);
    builder.write_etc();
    return builder.report();
  } catch (const fs::filesystem_error& error) {
    throw BuildError(fmt::format("building {}: {}", request.out.string(), error.what()));
  } catch (const std::runtime_error& error) {
    if (dynamic_cast<const BuildError*>(&error) != nullptr) throw;
    throw BuildError(error.what());
  }
}

}  // namespace jail::rootfs
