// Output directories: fp8lab writes only into directories it created (or empty ones), and one
// process at a time.
//
// A directory fp8lab creates for output carries a marker file, `.fp8lab-output`, naming what it
// holds ("run", "data", "unpack", "study"). Claiming a directory for output accepts a new path
// (created and marked), an empty directory (marked), or a directory whose marker names the same
// kind; anything else holds files fp8lab did not make, and is refused unless the user passes
// --force. A claimed directory is also locked: an advisory lock (flock) on `.fp8lab-lock`, whose
// text names the holder (pid, host, start time) so that a second writer's error can name it. The
// kernel drops the lock when its holder exits, however it exits (kill -9 included).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

inline constexpr const char* kOutputMarkerFile = ".fp8lab-output";
inline constexpr const char* kOutputLockFile = ".fp8lab-lock";

struct ClaimOptions {
  bool force = false;  // accept a directory fp8lab did not create (it is then marked)
  // Recognises an unmarked directory that an older fp8lab wrote (e.g. a run with checkpoints):
  // it is accepted and marked.
  std::function<bool(const std::filesystem::path&)> written_by_older_fp8lab;
};

// A claimed, locked output directory; the lock is held until destruction.
class OutputDirectory {
 public:
  // Throws ErrorKind::invalid_argument when the directory is refused (naming it, its marker or
  // its entries, and --force), ErrorKind::busy when another process holds its lock (naming the
  // holder), ErrorKind::io when it cannot be created or locked.
  OutputDirectory(const std::filesystem::path& dir, std::string_view kind,
                  const ClaimOptions& options = {});
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
  int lock_fd_ = -1;
};

// The kind named by `dir`'s marker, or "" when it has none.
std::string output_marker_kind(const std::filesystem::path& dir);

// Throws ErrorKind::invalid_argument when writing `output` could overwrite one of `inputs`: the
// same file (also through links), or for a directory output, an input inside it or it inside an
// input directory. `what` names the output's option in the message ("--out").
void check_output_not_input(const std::filesystem::path& output,
                            const std::vector<std::filesystem::path>& inputs,
                            std::string_view what);

}  // namespace fp8lab
