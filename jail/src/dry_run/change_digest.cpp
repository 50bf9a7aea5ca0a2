// The digest of a change set: what a reviewer approved, named so that a commit can refuse
// anything else (CommitOptions::expect_digest).
#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "dry_run/digest.hpp"
#include "dry_run/manifest.hpp"
#include "dry_run/tree.hpp"
#include "jail/byte_text.hpp"
#include "jail/dry_run.hpp"

namespace jail::dry_run {

std::string change_set_digest(const Session& session, const std::vector<Change>& changes) {
  nlohmann::json doc = nlohmann::json::array();
  const std::vector<std::string> uppers = [&] {
    std::vector<std::string> out;
    for (std::size_t layer = 0; layer < session.binds.size(); ++layer)
      out.push_back(upper_dir(session, layer));
    return out;
  }();
  for (const Change& change : changes) {
    std::string content;
    if (change.kind != ChangeKind::deleted && change.type == EntryType::file) {
      const UniqueFd upper = open_directory(uppers.at(change.layer));
      const UniqueFd file = open_beneath(upper.get(), change.relative, O_RDONLY);
      content = file.valid() ? sha256_of_fd(file.get(), change.relative) : "unreadable";
    }
    // The host side as the review showed it (not its mtime: a touch is the drift check's).
    doc.push_back({change.layer, text_json(change.relative), to_string(change.kind),
                   to_string(change.type), change.new_mode, text_json(change.link_target), content,
                   change.before.exists, to_string(change.before.type), change.before.size,
                   change.before.mode});
  }
  return sha256_of_text(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
}

}  // namespace jail::dry_run
