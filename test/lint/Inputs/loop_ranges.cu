// Loops over one range (loop_ranges.h): what one loop does to the elements
// `streams[i]`, `done[i]` or `w.stream` of `for (auto& w : workers)` is
// what another loop over the same range finds. Each correct form is
// silent; each broken form is reported, and so is each form the analysis
// cannot name a range for.
#include <cuda_runtime.h>

__global__ void scale(float* p, int n) {}

// A container of the program's own.
template <typename T>
struct List {
  T* begin();
  T* end();
  const T* begin() const;
  const T* end() const;
  unsigned long size() const;
  void push_back(const T& value);
};

struct Worker {
  cudaStream_t stream;
  cudaEvent_t done;
  float* part;
};

// --- correct: silent ---------------------------------------------------------

// The fan-in is a second loop over the fan-out's range.
void fan_in_second_loop(cudaStream_t* streams, cudaEvent_t* done, int nstreams, int n) {
  float* d;
  cudaMallocAsync(&d, n * sizeof(float), streams[0]);
  int slice = n / nstreams;
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d + i * slice, slice);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int j = 1; j < nstreams; j++) cudaStreamWaitEvent(streams[0], done[j], 0);
  cudaFreeAsync(d, streams[0]);
}

// The host waits for each stream in a loop of its own.
void host_waits_each(cudaStream_t* streams, int nstreams, int n) {
  float* d;
  cudaMallocAsync(&d, n * sizeof(float), streams[0]);
  for (int i = 1; i < nstreams; ++i) scale<<<1, 256, 0, streams[i]>>>(d, n);
  for (int i = 1; i < nstreams; ++i) cudaStreamSynchronize(streams[i]);
  cudaFreeAsync(d, streams[0]);
}

// Each stream's own buffer, freed on that stream in a later loop.
void per_stream_buffers(cudaStream_t* streams, float** bufs, int nstreams) {
  for (int i = 0; i < nstreams; ++i) scale<<<1, 256, 0, streams[i]>>>(bufs[i], 256);
  for (int i = 0; i < nstreams; ++i) cudaFreeAsync(bufs[i], streams[i]);
}

// Workers walked twice by range-for: launch and record, then wait.
void workers_fan_in(const List<Worker>& workers, cudaStream_t main_stream, float* d) {
  for (const Worker& w : workers) {
    scale<<<1, 256, 0, w.stream>>>(d, 1);
    cudaEventRecord(w.done, w.stream);
  }
  for (const Worker& w : workers) cudaStreamWaitEvent(main_stream, w.done, 0);
  cudaFreeAsync(d, main_stream);
}

// The same through a reference the function may change elements through.
void workers_fan_in_mutable(List<Worker>& workers, cudaStream_t main_stream, float* d) {
  for (Worker& w : workers) {
    cudaStreamCreate(&w.stream);
    scale<<<1, 256, 0, w.stream>>>(d, 1);
    cudaEventRecord(w.done, w.stream);
  }
  for (unsigned long k = 0; k < workers.size(); ++k) (void)k;
  for (Worker& w : workers) cudaStreamWaitEvent(main_stream, w.done, 0);
  cudaFreeAsync(d, main_stream);
}

// A fixed-size array of streams, its bound a constant.
constexpr int kStreams = 4;
void array_fan_in(float* d, cudaStream_t main_stream) {
  cudaStream_t streams[kStreams];
  cudaEvent_t done[kStreams];
  for (auto& s : streams) cudaStreamCreate(&s);
  for (int i = 0; i < kStreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int i = 0; i < kStreams; ++i) cudaStreamWaitEvent(main_stream, done[i], 0);
  cudaFreeAsync(d, main_stream);
}

// --- broken: reported ----------------------------------------------------------

// The fan-in starts one element late: streams[1] is never waited for.
void fan_in_short(cudaStream_t* streams, cudaEvent_t* done, int nstreams, float* d) {
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int j = 2; j < nstreams; ++j) cudaStreamWaitEvent(streams[0], done[j], 0);
  cudaFreeAsync(d, streams[0]);
}

// The fan-in may stop after its first wait.
void fan_in_breaks(cudaStream_t* streams, cudaEvent_t* done, int nstreams, float* d, bool stop) {
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int j = 1; j < nstreams; ++j) {
    cudaStreamWaitEvent(streams[0], done[j], 0);
    if (stop) break;
  }
  cudaFreeAsync(d, streams[0]);
}

// The fan-in waits for every other stream only.
void fan_in_skips(cudaStream_t* streams, cudaEvent_t* done, int nstreams, float* d) {
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int j = 1; j < nstreams; ++j)
    if (j % 2) cudaStreamWaitEvent(streams[0], done[j], 0);
  cudaFreeAsync(d, streams[0]);
}

// Each buffer freed on the first stream, which waited for none.
void per_stream_buffers_freed_on_first(cudaStream_t* streams, float** bufs, int nstreams) {
  for (int i = 0; i < nstreams; ++i) scale<<<1, 256, 0, streams[i]>>>(bufs[i], 256);
  for (int i = 0; i < nstreams; ++i) cudaFreeAsync(bufs[i], streams[0]);
}

// Workers launched and recorded, never waited for.
void workers_no_fan_in(const List<Worker>& workers, cudaStream_t main_stream, float* d) {
  for (const Worker& w : workers) {
    scale<<<1, 256, 0, w.stream>>>(d, 1);
    cudaEventRecord(w.done, w.stream);
  }
  cudaFreeAsync(d, main_stream);
}

// The use on s1 reaches streams[0] only through the loops, which run no
// round when nstreams is 1.
void ordered_through_loops_only(cudaStream_t s1, cudaStream_t* streams, cudaEvent_t e1,
                                cudaEvent_t* done, int nstreams, float* d) {
  scale<<<1, 256, 0, s1>>>(d, 1);
  cudaEventRecord(e1, s1);
  for (int i = 1; i < nstreams; ++i) {
    cudaStreamWaitEvent(streams[i], e1, 0);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int i = 1; i < nstreams; ++i) cudaStreamWaitEvent(streams[0], done[i], 0);
  cudaFreeAsync(d, streams[0]);
}

// --- no range named: reported as before ----------------------------------------

// The bound changes between the loops.
void bound_changes(cudaStream_t* streams, cudaEvent_t* done, int nstreams, float* d) {
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  nstreams = 2;
  for (int j = 1; j < nstreams; ++j) cudaStreamWaitEvent(streams[0], done[j], 0);
  cudaFreeAsync(d, streams[0]);
}

// The container grows between the loops.
void workers_grow(List<Worker>& workers, cudaStream_t main_stream, float* d) {
  for (Worker& w : workers) {
    scale<<<1, 256, 0, w.stream>>>(d, 1);
    cudaEventRecord(w.done, w.stream);
  }
  workers.push_back(Worker{});
  for (const Worker& w : workers) cudaStreamWaitEvent(main_stream, w.done, 0);
  cudaFreeAsync(d, main_stream);
}

// The fan-in's counter takes two steps a round.
void counter_skips(cudaStream_t* streams, cudaEvent_t* done, int nstreams, float* d) {
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d, 1);
    cudaEventRecord(done[i], streams[i]);
  }
  for (int j = 1; j < nstreams; ++j) {
    cudaStreamWaitEvent(streams[0], done[j], 0);
    j += 1;
  }
  cudaFreeAsync(d, streams[0]);
}

// --- loops nested over one range -------------------------------------------------

// Every ordered pair of streams, the host waiting for the round's stream
// at its end: s[i] and s[j] may be one stream (the round where i == j
// copies on s[i]), so that wait on s[j] may be the wait on s[i]: silent.
void every_pair(cudaStream_t* s, float** bufs, int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j)
        cudaMemcpyAsync(bufs[i], bufs[0], 64, cudaMemcpyDeviceToDevice, s[i]);
      else
        cudaMemcpyAsync(bufs[i], bufs[0], 64, cudaMemcpyDeviceToDevice, s[j]);
      cudaStreamSynchronize(s[j]);
    }
  }
}

// Two copies of one pair at once, each direction on its own stream: the
// second overwrites what the first still reads.
void both_directions(cudaStream_t* s0, cudaStream_t* s1, float** bufs, int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      cudaMemcpyAsync(bufs[i], bufs[j], 64, cudaMemcpyDeviceToDevice, s1[j]);
      cudaMemcpyAsync(bufs[j], bufs[i], 64, cudaMemcpyDeviceToDevice, s0[i]);
      cudaStreamSynchronize(s0[i]);
      cudaStreamSynchronize(s1[j]);
    }
  }
}
