// Joining the job bench/compare started: RANK and SIZE from the environment, a
// FileStore in GLOO_STORE_DIR (a fresh temp dir per launch) for the address
// exchange, and Gloo's TCP transport bound to 127.0.0.1.
#pragma once

#include <memory>

#include <gloo/context.h>

// busyPoll switches every pair to Gloo's synchronous mode with busy-polling
// receives (transport::Pair::setSync(true, true)). Throws on a missing
// variable or a failed rendezvous.
std::shared_ptr<gloo::Context> glooJoin(bool busyPoll);
