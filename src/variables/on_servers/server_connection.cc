#include "variables/on_servers/server_connection.h"

#include "ps/cluster_servers.h"

namespace dist {

ServerConnection::ServerConnection(ps::ClientOptions client, PlacementPolicy policy, WorkerPosition position)
    : call_timeout_(client.timeouts.call),
      client_(std::move(client)),
      placer_(client_.num_servers(), policy),
      position_(position) {}

std::shared_ptr<ServerConnection> connect_to_servers(const ResolvedCluster& cluster,
                                                     const ServerConnectionOptions& options) {
  const WorkerPosition position = options.world_position ? *options.world_position : worker_position(cluster);
  ps::ClientOptions client;
  client.servers = ps::cluster_servers(cluster.spec);
  client.token = options.token;
  client.timeline = options.timeline;
  if (options.call_timeout) client.timeouts.call = *options.call_timeout;
  // Anonymous when alone: every gradient counts in a synchronous round.
  if (position.count > 1 || options.world_position) client.worker_id = position.index;
  return std::make_shared<ServerConnection>(std::move(client), options.placement, position);
}

}  // namespace dist
