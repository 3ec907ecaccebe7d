// A hidden folder, "<parent>/<prefix>.<pid>", where output is built before it is moved into
// place: a run stopped part way leaves what was there before as it was.
#pragma once

#include <string>

namespace newscls {

class StagingFolder {
 public:
  // Makes the folder, first removing those of earlier runs that could not clean up after
  // themselves (killed outright: their process is gone).
  StagingFolder(const std::string& parent, const std::string& prefix);
  ~StagingFolder();  // removes the folder and whatever is still in it
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace newscls
