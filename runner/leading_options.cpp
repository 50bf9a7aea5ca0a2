#include "leading_options.hpp"

#include <charconv>
#include <optional>
#include <string_view>

namespace jail::runner {
namespace {

// "--name=value" → value, "--name" → the next word (consumed), else nullopt.
std::optional<std::string> value_of(std::string_view word, std::string_view name, int argc,
                                    char** argv, int& i, std::vector<std::string>& words) {
  if (word == name) {
    if (i + 1 >= argc) return std::nullopt;
    words.emplace_back(argv[i]);
    words.emplace_back(argv[++i]);
    return std::string(argv[i]);
  }
  if (word.size() > name.size() && word.starts_with(name) && word[name.size()] == '=') {
    words.emplace_back(word);
    return std::string(word.substr(name.size() + 1));
  }
  return std::nullopt;
}

}  // namespace

LeadingOptions read_leading_options(int argc, char** argv) {
  LeadingOptions leading;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view word = argv[i];
    const int at = i;
    const std::size_t taken = leading.words.size();
    // A wrong or missing value ends the reading at its option, which is left as it was.
    const auto stop = [&] {
      i = at;
      leading.words.resize(taken);
    };
    if (word == "-q" || word == "--quiet") {
      leading.log.quiet = true;
      leading.words.emplace_back(word);
    } else if (word == "--verbose") {
      ++leading.log.verbosity;
      leading.words.emplace_back(word);
    } else if (word.size() >= 2 && word[0] == '-' && word.find_first_not_of('v', 1) == word.npos) {
      leading.log.verbosity += static_cast<int>(word.size() - 1);
      leading.words.emplace_back(word);
    } else if (word.starts_with("--log-file")) {
      auto file = value_of(word, "--log-file", argc, argv, i, leading.words);
      if (!file || file->empty()) {
        stop();
        break;
      }
      leading.log.file = *file;
    } else if (word.starts_with("--log-format")) {
      auto format = value_of(word, "--log-format", argc, argv, i, leading.words);
      if (!format || (*format != "text" && *format != "json")) {
        stop();
        break;
      }
      leading.log.format = *format == "json" ? LogFormat::json : LogFormat::text;
    } else if (word.starts_with("--log-fd")) {
      auto fd_text = value_of(word, "--log-fd", argc, argv, i, leading.words);
      int fd = -1;
      const bool valid =
          fd_text &&
          std::from_chars(fd_text->data(), fd_text->data() + fd_text->size(), fd).ptr ==
              fd_text->data() + fd_text->size() &&
          !fd_text->empty() && fd >= 0;
      if (!valid) {
        stop();
        break;
      }
      leading.log.fd = fd;
    } else {
      break;
    }
  }
  leading.next = i;
  return leading;
}

}  // namespace jail::runner
