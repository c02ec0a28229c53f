// dist-info's subcommands. Each takes the arguments after its name and returns
// the process exit code; errors are printed to stderr.
#pragma once

#include <string>
#include <vector>

namespace dist::info {

using Args = std::vector<std::string>;

int cluster_command(const Args& args);
int expand_hostlist_command(const Args& args);
int build_command(const Args& args);
int topology_command(const Args& args);
int timeline_command(const Args& args);

// Prints "dist-info: <message>" to stderr and returns the exit code for errors.
int report_error(const std::string& message);

}  // namespace dist::info
