// The SentencePiece calls behind SubwordTokenizer, kept in a plugin (libnewscls_spm.so)
// that is dlopen'ed with RTLD_DEEPBIND.
//
// Why: Debian's libsentencepiece carries its own protobuf (3.14) and exports its symbols,
// while LibTorch loads the system protobuf (3.21). Linked into one binary, the two
// interpose on each other and the process crashes in protobuf's static initialisers
// before main. Loaded privately with RTLD_DEEPBIND, sentencepiece binds to its own copy.
//
//   std::unique_ptr<SpmBackend> spm = make_spm_backend();   // throws IoError if missing
//   std::string error = spm->load(bytes);                    // "" on success
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace newscls {

class SpmBackend {
 public:
  virtual ~SpmBackend() = default;
  // Each returns "" on success, else SentencePiece's message.
  virtual std::string train(const std::vector<std::string>& sentences,
                            const std::unordered_map<std::string, std::string>& args, std::string* serialized) = 0;
  virtual std::string load(const std::string& serialized) = 0;
  virtual std::vector<std::string> encode_pieces(std::string_view text) const = 0;
  virtual std::vector<int> encode_ids(std::string_view text) const = 0;
  virtual int piece_size() const = 0;
  virtual int piece_to_id(const std::string& piece) const = 0;
  virtual std::string id_to_piece(int id) const = 0;
};

// Loads the plugin once ($NEWSCLS_SPM_PLUGIN, else the path compiled in, else next to the
// executable) and makes a fresh backend.
std::unique_ptr<SpmBackend> make_spm_backend();

}  // namespace newscls

// The plugin's one entry point.
extern "C" newscls::SpmBackend* newscls_spm_create();
