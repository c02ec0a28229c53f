#include "options.h"

#include <cmath>
#include <cstdlib>
#include <exception>

#include "base/numbers.h"
#include "messages.h"

namespace dist::run {

const char kSynopsis[] =
    "usage: dist-run -n N [--ps M [--ps-server]] [--chief] [--evaluator] [--host ADDR]\n"
    "                [--token-file FILE] [--timeout SECONDS] [--grace-period SECONDS]\n"
    "                [--] program [args...]\n";

const char kDetails[] =
    "\n"
    "Starts N worker tasks (plus M parameter servers, a chief and an evaluator when\n"
    "asked) on this machine, each running `program args...` with TF_CONFIG,\n"
    "DIST_TASK_NAME and a cluster token set, and prefixes every line they print\n"
    "with \"[type:index] \".\n"
    "\n"
    "  -n, --workers N        worker tasks (at least 1)\n"
    "  --ps M                 parameter-server tasks (default 0)\n"
    "  --ps-server            ps tasks run the standard server, dist-server (from\n"
    "                         dist-run's directory, else PATH), instead of the\n"
    "                         program; they are stopped once every other task has\n"
    "                         exited successfully\n"
    "  --chief                add one chief task\n"
    "  --evaluator            add one evaluator (outside the cluster, as in TensorFlow)\n"
    "  --host ADDR            address the tasks listen on (default 127.0.0.1); ports\n"
    "                         are free ones picked on it\n"
    "  --token-file FILE      pass DIST_CLUSTER_TOKEN_FILE=FILE instead of a fresh\n"
    "                         random DIST_CLUSTER_TOKEN\n"
    "  --timeout SECONDS      stop the job after this long and exit 124\n"
    "  --grace-period SECONDS time tasks get between SIGTERM and SIGKILL (default 5)\n"
    "  -h, --help             print this help\n"
    "\n"
    "When a task fails, the others are stopped and dist-run exits with its status\n"
    "(128+N for signal N). SIGINT, SIGTERM and SIGHUP are forwarded to the tasks; a\n"
    "second one kills them.\n";

namespace {

constexpr int32_t kMaxTasksPerJob = 4096;

double parse_seconds(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 0) {
    fail_usage(flag + ": '" + text + "' is not a positive number of seconds");
  }
  return value;
}

int32_t parse_count(const std::string& text, const std::string& flag, int32_t min) {
  try {
    return parse_int32(text, flag, min, kMaxTasksPerJob);
  } catch (const std::exception& e) {
    fail_usage(e.what());
  }
}

// Walks argv, splitting "--flag=value" and "-nVALUE" so each flag sees its value.
class ArgumentReader {
 public:
  ArgumentReader(int argc, char** argv) : args_(argv + 1, argv + argc) {}

  bool done() const { return next_ >= args_.size(); }
  const std::string& peek() const { return args_[next_]; }
  std::string take() { return args_[next_++]; }

  // The value of `flag`: the attached part ("--ps=2", "-n2") or the next word.
  std::string value_for(const std::string& flag, const std::optional<std::string>& attached) {
    if (attached) return *attached;
    if (done()) fail_usage(flag + " needs a value");
    return take();
  }

  std::vector<std::string> rest() {
    std::vector<std::string> words(args_.begin() + static_cast<std::ptrdiff_t>(next_), args_.end());
    next_ = args_.size();
    return words;
  }

 private:
  std::vector<std::string> args_;
  size_t next_ = 0;
};

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  bool have_workers = false;
  ArgumentReader reader(argc, argv);
  while (!reader.done()) {
    const std::string& word = reader.peek();
    if (word == "--") {
      reader.take();
      break;
    }
    // The first word that is not a flag starts the program's command line, so
    // `dist-run -n 2 train --epochs 3` passes --epochs to train.
    if (word.size() < 2 || word[0] != '-') break;
    const std::string original = reader.take();
    std::string flag = original;
    std::optional<std::string> attached;
    if (flag.rfind("--", 0) == 0) {
      auto equals = flag.find('=');
      if (equals != std::string::npos) {
        attached = flag.substr(equals + 1);
        flag.resize(equals);
      }
    } else if (flag.size() > 2) {
      attached = flag.substr(2);
      flag.resize(2);
    }
    auto takes_no_value = [&]() {
      if (attached) fail_usage(flag + " takes no value");
    };

    if (flag == "-h" || flag == "--help") {
      options.help = true;
      return options;
    } else if (flag == "-n" || flag == "--workers") {
      options.num_workers = parse_count(reader.value_for(flag, attached), flag, 1);
      have_workers = true;
    } else if (flag == "--ps") {
      options.num_ps = parse_count(reader.value_for(flag, attached), flag, 0);
    } else if (flag == "--ps-server") {
      takes_no_value();
      options.ps_server = true;
    } else if (flag == "--chief") {
      takes_no_value();
      options.chief = true;
    } else if (flag == "--evaluator") {
      takes_no_value();
      options.evaluator = true;
    } else if (flag == "--host") {
      options.host = reader.value_for(flag, attached);
      if (options.host.empty()) fail_usage("--host needs a non-empty address");
    } else if (flag == "--token-file") {
      options.token_file = reader.value_for(flag, attached);
      if (options.token_file->empty()) fail_usage("--token-file needs a file name");
    } else if (flag == "--timeout") {
      options.timeout_seconds = parse_seconds(reader.value_for(flag, attached), flag);
    } else if (flag == "--grace-period") {
      options.grace_seconds = parse_seconds(reader.value_for(flag, attached), flag);
    } else {
      fail_usage("unknown option '" + original + "'");
    }
  }
  options.command = reader.rest();
  if (!have_workers) fail_usage("the number of workers (-n N) is required");
  if (options.command.empty()) fail_usage("no program to run");
  return options;
}

}  // namespace dist::run
