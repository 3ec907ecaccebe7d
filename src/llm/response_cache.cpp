#include "llm/response_cache.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include "newscls/core/atomic_file.h"
#include "newscls/core/error.h"
#include "newscls/core/sha256.h"

namespace newscls::llm {
namespace {

constexpr int kSchemaVersion = 1;

bool is_lock_error(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string cache_key(const std::string& base_url, const std::string& request_body) {
  // Length-prefixed parts, so no two (url, body) pairs share the material.
  std::string material = "newscls-llm-cache-key-v2;";
  for (const std::string* part : {&base_url, &request_body}) {
    material += std::to_string(part->size()) + ":" + *part + ";";
  }
  return sha256_hex(material);
}

std::string resolve_cache_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) {
    return xdg + "/newscls/llm-cache.sqlite";
  }
  if (std::string home = env_or_empty("HOME"); !home.empty()) {
    return home + "/.cache/newscls/llm-cache.sqlite";
  }
  return ".newscls-llm-cache.sqlite";
}

ResponseCache::ResponseCache(const std::string& path, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) make_directories(parent.string());
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw IoError(path, "cannot open the LLM response cache: " + why);
  }
  try {
    sqlite3_busy_timeout(db_, busy_timeout_ms_);
    check_schema_version();
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    exec(
        "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, content TEXT NOT NULL, "
        "prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, "
        "created_unix INTEGER)");
    exec(("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
    check(sqlite3_prepare_v2(db_,
                             "SELECT content, prompt_tokens, completion_tokens, cached_tokens "
                             "FROM responses WHERE key = ?1",
                             -1, &get_, nullptr),
          "prepare");
    check(
        sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO responses VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &put_, nullptr),
        "prepare");
  } catch (...) {
    sqlite3_finalize(get_);
    sqlite3_finalize(put_);
    sqlite3_close(db_);
    throw;
  }
}

ResponseCache::~ResponseCache() {
  sqlite3_finalize(get_);
  sqlite3_finalize(put_);
  sqlite3_close(db_);
}

// A cache written by a newer newscls may hold rows this one misreads: refuse it.
void ResponseCache::check_schema_version() {
  sqlite3_stmt* stmt = nullptr;
  check(sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &stmt, nullptr), "prepare");
  const int version = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  if (version > kSchemaVersion) {
    throw IoError(path_, "LLM response cache has schema version " + std::to_string(version) +
                             ", this newscls supports up to " + std::to_string(kSchemaVersion));
  }
}

void ResponseCache::check(int rc, const char* what) {
  if (is_lock_error(rc)) throw locked_error();
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw IoError(path_, std::string("LLM response cache ") + what + " failed: " + sqlite3_errmsg(db_));
  }
}

// SQLite's "database is locked" once the busy timeout has passed: another process is writing
// (a lock taken by a write transaction, or BEGIN EXCLUSIVE) and did not finish in that time.
IoError ResponseCache::locked_error() const {
  return IoError(path_,
                 fmt::format("LLM response cache is locked: another process (another newscls run?) has kept "
                             "it in use for over {:g} s; wait for it to finish, or set cache_path to another file",
                             busy_timeout_ms_ / 1000.0));
}

void ResponseCache::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (is_lock_error(rc)) {
    sqlite3_free(message);
    throw locked_error();
  }
  if (rc != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw IoError(path_, "LLM response cache: " + why + " (is this a newscls cache file?)");
  }
}

std::optional<ChatReply> ResponseCache::get(const std::string& key) {
  sqlite3_reset(get_);
  check(sqlite3_bind_text(get_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT), "bind");
  const int rc = sqlite3_step(get_);
  check(rc, "lookup");
  if (rc != SQLITE_ROW) return std::nullopt;
  ChatReply reply;
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(get_, 0));
  reply.content.assign(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(get_, 0)));
  reply.usage.prompt_tokens = sqlite3_column_int64(get_, 1);
  reply.usage.completion_tokens = sqlite3_column_int64(get_, 2);
  reply.usage.cached_tokens = sqlite3_column_int64(get_, 3);
  sqlite3_reset(get_);
  return reply;
}

void ResponseCache::put(const std::string& key, const ChatReply& reply) {
  sqlite3_reset(put_);
  check(sqlite3_bind_text(put_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT), "bind");
  check(sqlite3_bind_text(put_, 2, reply.content.data(), static_cast<int>(reply.content.size()), SQLITE_TRANSIENT),
        "bind");
  check(sqlite3_bind_int64(put_, 3, reply.usage.prompt_tokens), "bind");
  check(sqlite3_bind_int64(put_, 4, reply.usage.completion_tokens), "bind");
  check(sqlite3_bind_int64(put_, 5, reply.usage.cached_tokens), "bind");
  check(sqlite3_bind_int64(put_, 6, static_cast<sqlite3_int64>(std::time(nullptr))), "bind");
  check(sqlite3_step(put_), "write");
  sqlite3_reset(put_);
}

}  // namespace newscls::llm
