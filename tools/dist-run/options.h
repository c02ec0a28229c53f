// dist-run's command line: which tasks to start and the program they run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist::run {

struct Options {
  int32_t num_workers = 0;
  int32_t num_ps = 0;
  bool chief = false;
  bool evaluator = false;
  // ps tasks run the standard server (dist-server) and are stopped once every
  // other task has exited successfully.
  bool ps_server = false;
  std::string host = "127.0.0.1";
  std::optional<std::string> token_file;
  std::optional<double> timeout_seconds;
  double grace_seconds = 5.0;  // between SIGTERM and SIGKILL when the job stops
  std::vector<std::string> command;  // program and its arguments
  bool help = false;
};

// The usage lines (printed after an argument error) and the rest of --help.
extern const char kSynopsis[];
extern const char kDetails[];

// Parses argv; bad arguments throw a usage LaunchError (exit 2). With --help the
// rest is not checked.
Options parse_options(int argc, char** argv);

}  // namespace dist::run
