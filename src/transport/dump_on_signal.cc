#include "transport/dump_on_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/json.h"
#include "base/log.h"
#include "base/status.h"
#include "transport/context.h"

namespace dist {

namespace {

// The handler only writes a byte here: all it may do.
int g_wake_fd = -1;

void on_dump_signal(int) {
  const int saved = errno;
  const char byte = 'd';
  (void)!write(g_wake_fd, &byte, 1);
  errno = saved;
}

struct Watched {
  std::mutex mutex;
  std::set<Context*> contexts;
  bool installed = false;
};

Watched& watched() {
  static Watched* w = new Watched;  // never destroyed: the thread may outlive main's statics
  return *w;
}

std::string dump_directory() {
  const char* dir = std::getenv("DIST_FLIGHT_RECORDER_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

void write_dump(Context& context) {
  const Json dump = context.dump();
  const std::string path = dump_directory() + "/dist-flight." + std::to_string(context.rank()) + "." +
                           std::to_string(getpid()) + ".json";
  const std::string temporary = path + ".tmp";
  const std::string text = dump_json(dump, 1) + "\n";
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0) ok = close(fd) == 0 && ok;
  ok = ok && rename(temporary.c_str(), path.c_str()) == 0;
  if (ok) {
    log_message(LogLevel::kWarn, context.name(context.rank()) + ": flight recorder written to " + path);
  } else {
    log_message(LogLevel::kWarn, "flight recorder: writing " + path + " failed: " + std::strerror(errno));
    unlink(temporary.c_str());
  }
}

void dump_loop(int read_fd) {
  char byte;
  while (true) {
    const ssize_t got = read(read_fd, &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;
    Watched& w = watched();
    std::lock_guard<std::mutex> guard(w.mutex);
    for (Context* context : w.contexts) write_dump(*context);
  }
}

int signal_number(const std::string& name) {
  if (name == "USR1" || name == "SIGUSR1") return SIGUSR1;
  if (name == "USR2" || name == "SIGUSR2") return SIGUSR2;
  fail_invalid("DIST_FLIGHT_RECORDER_SIGNAL: " + quoted(name) + " is not USR1 or USR2");
}

}  // namespace

int dump_signal_from_environment() {
  const char* name = std::getenv("DIST_FLIGHT_RECORDER_SIGNAL");
  if (name == nullptr || *name == '\0') return 0;
  return signal_number(name);
}

void watch_dump_signal(Context* context, int signal) {
  if (signal == 0) return;
  Watched& w = watched();
  std::lock_guard<std::mutex> guard(w.mutex);
  if (!w.installed) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      log_message(LogLevel::kWarn, std::string("flight recorder: no dumps on a signal: pipe: ") + std::strerror(errno));
      return;
    }
    g_wake_fd = fds[1];
    fcntl(g_wake_fd, F_SETFL, O_NONBLOCK);  // a flood of signals must not block the handler
    std::thread(dump_loop, fds[0]).detach();
    struct sigaction action {};
    action.sa_handler = on_dump_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(signal, &action, nullptr) != 0) {
      log_message(LogLevel::kWarn, std::string("flight recorder: no dumps on a signal: sigaction: ") + std::strerror(errno));
    }
    w.installed = true;
  }
  w.contexts.insert(context);
}

void unwatch_dump_signal(Context* context) {
  Watched& w = watched();
  std::lock_guard<std::mutex> guard(w.mutex);
  w.contexts.erase(context);
}

}  // namespace dist
