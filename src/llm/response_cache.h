// A persistent cache of chat replies in SQLite, so a rerun sends nothing and a killed run
// resumes without paying twice.
//
// One table, responses(key TEXT PRIMARY KEY, content, prompt_tokens, completion_tokens,
// cached_tokens, created_unix), in WAL mode; each non-empty reply is committed as it arrives
// (synchronous=NORMAL: a killed process loses nothing, a power cut at most the last few).
// The key is cache_key(): sha256 of base_url and the request body exactly as sent (model,
// messages with the title, temperature, max_tokens, thinking, response_format, extra_body),
// so any change to what is asked asks again. Rows written under the older key (base_url,
// model, prompt fingerprint, title) no longer match and are simply never read.
// Several processes may share one file: a write waits up to 10 s for another's lock, then fails
// saying the cache is locked.
//
//   ResponseCache cache("~/.cache/newscls/llm-cache.sqlite");
//   if (auto hit = cache.get(key)) use(hit->content); else cache.put(key, reply);
#pragma once

#include <optional>
#include <string>

#include "llm/chat_api.h"
#include "newscls/core/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace newscls::llm {

std::string cache_key(const std::string& base_url, const std::string& request_body);

class ResponseCache {
 public:
  static constexpr int kBusyTimeoutMs = 10000;

  // Creates the file and its directory; IoError when it cannot be opened, is not ours, or is
  // locked by another process for longer than busy_timeout_ms.
  explicit ResponseCache(const std::string& path, int busy_timeout_ms = kBusyTimeoutMs);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  std::optional<ChatReply> get(const std::string& key);
  void put(const std::string& key, const ChatReply& reply);
  const std::string& path() const { return path_; }

 private:
  void exec(const char* sql);
  void check_schema_version();
  void check(int rc, const char* what);
  IoError locked_error() const;
  std::string path_;
  int busy_timeout_ms_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* get_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
};

// "" means the default: $XDG_CACHE_HOME/newscls/llm-cache.sqlite, else
// $HOME/.cache/newscls/llm-cache.sqlite, else ./.newscls-llm-cache.sqlite.
std::string resolve_cache_path(const std::string& configured);

}  // namespace newscls::llm
