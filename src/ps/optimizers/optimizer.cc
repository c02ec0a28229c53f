#include "ps/optimizers/optimizer.h"

#include "ps/optimizers/adagrad.h"
#include "ps/optimizers/adam.h"
#include "ps/optimizers/momentum.h"
#include "ps/optimizers/sgd.h"

namespace dist::ps {

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config) {
  validate(config);
  switch (config.kind) {
    case OptimizerKind::kSgd: return std::make_unique<SgdOptimizer>(config);
    case OptimizerKind::kMomentum: return std::make_unique<MomentumOptimizer>(config);
    case OptimizerKind::kAdagrad: return std::make_unique<AdagradOptimizer>(config);
    case OptimizerKind::kAdam: return std::make_unique<AdamOptimizer>(config);
    case OptimizerKind::kNone: break;
  }
  return nullptr;
}

}  // namespace dist::ps
