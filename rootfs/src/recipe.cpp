#include "rootfs/recipe.hpp"

#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kKeys = {"description", "binaries",  "trees",
                                     "files",       "libraries", "links"};

std::string where(const fs::path& file, const toml::source_region& region) {
  return fmt::format("{}:{}:{}", file.string(), region.begin.line, region.begin.column);
}

std::vector<std::string> strings(const toml::table& table, const char* key, const fs::path& file) {
  std::vector<std::string> out;
  const toml::node* node = table.get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    throw BuildError(
        fmt::format("{}: '{}' must be a list of strings", where(file, node->source()), key));
  }
  for (const auto& item : *array) {
    const auto value = item.value<std::string>();
    if (!value)
      throw BuildError(fmt::format("{}: '{}' holds a non-string", where(file, item.source()), key));
    out.push_back(*value);
  }
  return out;
}

}  // namespace

fs::path recipe_dir() {
  if (const char* dir = std::getenv("JAIL_RECIPE_DIR"); dir != nullptr) return dir;
  return JAIL_RECIPES_DIR;
}

void add_recipe(BuildRequest& request, const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".toml");
  const fs::path file = is_path ? fs::path(name_or_path) : recipe_dir() / (name_or_path + ".toml");
  std::error_code unreadable;  // a name too long, say: no such recipe, as below
  const fs::file_status status = fs::status(file, unreadable);
  if (fs::is_directory(status)) {
    throw BuildError(
        fmt::format("recipe {} is a directory; give a recipe's .toml file", name_or_path));
  }
  if (!fs::exists(status) && is_path) {
    // A file the caller named: the shipped recipes are no help, the path is.
    throw BuildError(fmt::format("recipe file {} does not exist", name_or_path));
  }
  if (!fs::exists(status)) {
    std::string known;
    for (const auto& entry : fs::directory_iterator(recipe_dir(), unreadable)) {
      if (entry.path().extension() == ".toml") known += " " + entry.path().stem().string();
    }
    throw BuildError(fmt::format("no recipe {} (shipped recipes:{})", name_or_path, known));
  }
  toml::table table;
  try {
    table = toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    throw BuildError(fmt::format("{}: {}", where(file, error.source()), error.description()));
  }
  for (const auto& [key, node] : table) {
    if (!kKeys.contains(std::string(key.str()))) {
      throw BuildError(
          fmt::format("{}: unknown key '{}' (known: binaries trees files libraries links "
                      "description)",
                      where(file, node.source()), key.str()));
    }
  }
  for (auto& binary : strings(table, "binaries", file)) request.binaries.push_back(binary);
  for (auto& tree : strings(table, "trees", file)) request.trees.emplace_back(tree);
  for (auto& path : strings(table, "files", file)) request.files.emplace_back(path);
  for (auto& library : strings(table, "libraries", file)) request.libraries.push_back(library);
  const toml::node* links_node = table.get("links");
  if (links_node != nullptr && links_node->as_table() == nullptr) {
    throw BuildError(fmt::format(
        "{}: 'links' must be a table: [links] with \"/path/in/root\" = \"link text\" lines",
        where(file, links_node->source())));
  }
  if (const toml::table* links = table["links"].as_table()) {
    for (const auto& [path, text] : *links) {
      const auto value = text.value<std::string>();
      if (!value)
        throw BuildError(
            fmt::format("{}: link {} must be a string", where(file, text.source()), path.str()));
      request.links[std::string(path.str())] = *value;
    }
  }
}

}  // namespace jail::rootfs
