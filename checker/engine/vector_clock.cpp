#include "checker/engine/vector_clock.h"

#include <algorithm>

namespace xsc {

void VectorClock::set(AgentId agent, Epoch epoch) {
  if (agent >= epochs_.size()) {
    if (epoch == 0) return;
    epochs_.resize(agent + 1, 0);
  }
  epochs_[agent] = epoch;
}

void VectorClock::grow(AgentId agent) { epochs_.resize(agent + 1, 0); }

void VectorClock::join(const VectorClock& other) {
  const std::size_t n = other.epochs_.size();
  if (n > epochs_.size()) epochs_.resize(n, 0);
  Epoch* mine = epochs_.data();
  const Epoch* theirs = other.epochs_.data();
  for (std::size_t i = 0; i < n; ++i) mine[i] = std::max(mine[i], theirs[i]);
}

void VectorClock::meet(const VectorClock& other) {
  // Missing components read as 0, so the result is no longer than `other`.
  if (epochs_.size() > other.epochs_.size()) epochs_.resize(other.epochs_.size());
  for (std::size_t i = 0; i < epochs_.size(); ++i)
    epochs_[i] = std::min(epochs_[i], other.epochs_[i]);
}

void VectorClock::assign(const VectorClock& other) {
  // vector::operator= reuses capacity when it suffices.
  epochs_ = other.epochs_;
}

bool VectorClock::happens_before_or_equal(const VectorClock& other) const {
  for (std::size_t i = 0; i < epochs_.size(); ++i)
    if (epochs_[i] > other.get(static_cast<AgentId>(i))) return false;
  return true;
}

}  // namespace xsc
