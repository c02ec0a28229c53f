// Parameter-server benchmark: a program, not a test. Starts two dist servers as
// child processes on loopback and measures, from this process:
//   push_pull_4MiB   one worker, one server: assign then read of a 4 MiB f32
//                    variable; value = (push + pull bytes) / median time, GB/s
//   push_4MiB, pull_4MiB  the two halves of that pair on their own
//   update_64B       one worker, one server: 64 B assign_add round trips/s
//   aggregate_64B    2 worker threads x 2 servers: each step adds 64 B to a
//                    variable split over both servers (both requests in
//                    flight together); value = shard updates/s, all workers
//
//   bench_ps [--iters N] [--seconds S]
// Prints CSV: case,bytes,iters,median_us,value,unit
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ps/client.h"
#include "ps/server.h"
#include "ps/variable_id.h"
#include "variables/on_servers/placement.h"
#include "variables/on_servers/variable_shards.h"

namespace {

using Clock = std::chrono::steady_clock;
const char kToken[] = "bench-token";

struct Child {
  pid_t pid;
  std::string address;
};

// A server in its own process; its bound address comes back through a pipe.
Child start_server() {
  int fds[2];
  if (pipe(fds) != 0) std::exit(2);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    dist::ps::ServerOptions options;
    options.address = "127.0.0.1:0";
    options.token = kToken;
    dist::ps::Server server(options);
    std::string address = server.bound_address() + "\n";
    if (write(fds[1], address.data(), address.size()) < 0) _exit(2);
    int signal_number = 0;
    sigwait(&stop, &signal_number);
    server.stop();
    server.join();
    _exit(0);
  }
  close(fds[1]);
  char text[128] = {};
  ssize_t n = read(fds[0], text, sizeof text - 1);
  close(fds[0]);
  if (n <= 0) std::exit(2);
  std::string address(text, static_cast<size_t>(n));
  address.pop_back();
  return {pid, address};
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

dist::ps::ClientOptions client_options(const std::vector<Child>& servers) {
  dist::ps::ClientOptions options;
  for (size_t i = 0; i < servers.size(); ++i) options.servers.push_back({"ps:" + std::to_string(i), servers[i].address});
  options.token = kToken;
  return options;
}

dist::ps::VariableSpec f32_spec(const char* name, int64_t elements) {
  dist::ps::VariableSpec spec;
  spec.name = name;
  spec.dtype = dist::DType::F32;
  spec.shape = {elements};
  spec.rows = static_cast<uint64_t>(elements);
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 50;
  double seconds = 3.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::max(0.1, std::atof(argv[i + 1]));
  }
  std::vector<Child> servers = {start_server(), start_server()};
  std::printf("case,bytes,iters,median_us,value,unit\n");
  try {
    dist::ps::PsClient client(client_options(servers));
    {  // push + pull of 4 MiB
      const int64_t elements = 1 << 20;
      const uint64_t id = dist::ps::variable_shard_id("big", 0);
      std::vector<float> data(elements, 1.0f), back(elements);
      client.wait(client.create(0, id, f32_spec("big", elements), data.data()));
      std::vector<double> samples, pushes, pulls;
      for (int i = 0; i < iters + 5; ++i) {
        auto start = Clock::now();
        client.wait(client.assign(0, id, data.data(), data.size() * 4));
        auto pushed = Clock::now();
        client.wait(client.read(0, id, back.data(), back.size() * 4));
        auto end = Clock::now();
        if (i < 5) continue;
        samples.push_back(std::chrono::duration<double, std::micro>(end - start).count());
        pushes.push_back(std::chrono::duration<double, std::micro>(pushed - start).count());
        pulls.push_back(std::chrono::duration<double, std::micro>(end - pushed).count());
      }
      const double bytes = static_cast<double>(data.size() * 4);
      const double us = median(samples);
      std::printf("push_pull_4MiB,%zu,%d,%.1f,%.3f,GBps\n", data.size() * 4, iters, us, 2.0 * bytes / us / 1e3);
      std::printf("push_4MiB,%zu,%d,%.1f,%.3f,GBps\n", data.size() * 4, iters, median(pushes), bytes / median(pushes) / 1e3);
      std::printf("pull_4MiB,%zu,%d,%.1f,%.3f,GBps\n", data.size() * 4, iters, median(pulls), bytes / median(pulls) / 1e3);
    }
    {  // 64 B update round trips
      const uint64_t id = dist::ps::variable_shard_id("small", 0);
      std::vector<float> delta(16, 0.5f);
      client.wait(client.create(0, id, f32_spec("small", 16), nullptr));
      const int n = iters * 400;
      std::vector<double> samples;
      auto begin = Clock::now();
      for (int i = 0; i < n; ++i) {
        auto start = Clock::now();
        client.wait(client.assign_add(0, id, delta.data(), 64));
        samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      const double total = std::chrono::duration<double>(Clock::now() - begin).count();
      std::printf("update_64B,64,%d,%.1f,%.0f,round_trips_per_s\n", n, median(samples), n / total);
    }
    {  // 2 workers x 2 servers
      dist::ps::VariableSpec spec = f32_spec("shared", 32);
      dist::Placer placer(2, dist::PlacementPolicy::kRoundRobin);
      dist::PartitionerOptions two;
      two.kind = dist::PartitionerKind::kFixedShards;
      two.num_shards = 2;
      const dist::VariablePlacement placement = placer.place("shared", 32, 4, two);
      dist::VariableShards(client, spec, placement).create(nullptr);
      std::atomic<uint64_t> updates{0};
      std::atomic<bool> go{false};
      std::vector<std::thread> workers;
      for (int w = 0; w < 2; ++w) {
        workers.emplace_back([&, w] {
          dist::ps::ClientOptions options = client_options(servers);
          options.worker_id = w;
          dist::ps::PsClient own(options);
          dist::VariableShards v(own, spec, placement);
          std::vector<float> delta(32, 1.0f);
          v.read(delta.data());  // connects before the clock starts
          std::fill(delta.begin(), delta.end(), 1.0f);
          while (!go.load()) std::this_thread::yield();
          auto end = Clock::now() + std::chrono::duration<double>(seconds);
          uint64_t done = 0;
          while (Clock::now() < end) {
            v.assign_add(delta.data());
            done += 2;
          }
          updates += done;
        });
      }
      go = true;
      for (auto& t : workers) t.join();
      std::printf("aggregate_64B_2x2,64,%llu,0,%.0f,shard_updates_per_s\n", (unsigned long long)updates.load(),
                  updates.load() / seconds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ps: %s\n", e.what());
  }
  for (const Child& child : servers) {
    kill(child.pid, SIGTERM);
    waitpid(child.pid, nullptr, 0);
  }
  return 0;
}
