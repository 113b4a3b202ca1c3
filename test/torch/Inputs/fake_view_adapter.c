/* Stands in for libxstream_torch.so's host-view entry points
 * (runtime/torch/host_views.cpp) under the wrappers' Python source: counts
 * the calls and keeps what the outermost leave reported. */
#include <stdint.h>

static int pinned = 1;
static int depth = 0;
static int enters = 0;
static int leaves = 0;
static int reports = 0;
static uint64_t last_addr = 0, last_size = 0;
static int last_what = -1;

int xsc_torch_view_enter(void) {
  if (!pinned) return 0;
  ++enters;
  ++depth;
  return 1;
}

void xsc_torch_view_leave(uint64_t addr, uint64_t size, int what) {
  ++leaves;
  if (depth > 0) --depth;
  if (depth > 0 || size == 0) return;
  ++reports;
  last_addr = addr;
  last_size = size;
  last_what = what;
}

void fake_set_pinned(int on) { pinned = on; }
void fake_reset(void) { enters = leaves = reports = 0; last_addr = last_size = 0; last_what = -1; }
int fake_enters(void) { return enters; }
int fake_leaves(void) { return leaves; }
int fake_reports(void) { return reports; }
int fake_depth(void) { return depth; }
uint64_t fake_last_addr(void) { return last_addr; }
uint64_t fake_last_size(void) { return last_size; }
int fake_last_what(void) { return last_what; }
