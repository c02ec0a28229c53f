#include "transport/cluster_token.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/status.h"

namespace dist {

std::string read_token_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    fail_invalid("token file '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) fail_invalid("token file '" + path + "' is not a regular file");
  if ((info.st_mode & 0077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    fail(Status::kAuth, "token file '" + path + "' has mode " + mode +
                            ": others can read it; make it private (chmod 600)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_invalid("token file '" + path + "' cannot be read");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::string token = bytes.str();
  // Editors add a final newline; it is not part of the token.
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.empty()) fail_invalid("token file '" + path + "' is empty");
  return token;
}

std::optional<std::string> load_cluster_token(const TokenSources& sources, const Environment& env) {
  if (sources.token) {
    if (sources.token->empty()) fail_invalid("options: token is empty");
    return sources.token;
  }
  if (sources.token_file) return read_token_file(*sources.token_file);
  if (auto token = env.get("DIST_CLUSTER_TOKEN"); token && !token->empty()) return token;
  if (auto file = env.get("DIST_CLUSTER_TOKEN_FILE"); file && !file->empty()) return read_token_file(*file);
  return std::nullopt;
}

std::string require_cluster_token(const TokenSources& sources, const Environment& env, const std::string& who) {
  auto token = load_cluster_token(sources, env);
  if (!token) {
    fail(Status::kAuth, who + ": no cluster token: set DIST_CLUSTER_TOKEN or DIST_CLUSTER_TOKEN_FILE (dist-run "
                              "does this for you), or pass one in the options");
  }
  return *token;
}

}  // namespace dist
