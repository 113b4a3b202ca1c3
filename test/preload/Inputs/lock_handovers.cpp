// Handovers between a C++ program's threads through its own locks, against
// the fake CUPTI (no GPU). One scenario per argument:
//
//   queue          the main thread downloads into pinned memory,
//                  synchronizes with the copy, then hands the buffer to a
//                  reader through a std::mutex and std::condition_variable
//                  queue; the reader is already asleep in the wait
//   queue-early    the same, handed over before the synchronization: the
//                  reader's read is a use before ready
//   queue-timed    the same, the reader waiting with a timeout
//                  (pthread_cond_clockwait)
//   queue-library  the same handover through a library's mutex calls
//                  (lock_library.c): not the program's, orders nothing
//   join           a std::thread downloads and synchronizes; the main
//                  thread reads after std::thread::join
//   shared         the reader polls a flag under a std::shared_lock; the
//                  main thread sets it under a std::unique_lock
//   barrier        a thread downloads and synchronizes, then both meet at
//                  a pthread barrier; the main thread reads after it
//   free           a worker thread reads device memory on its stream and
//                  synchronizes, then hands the buffer back through the
//                  queue; the main thread frees it on its allocation stream
//   free-early     the same, handed back before the synchronization: an
//                  unordered free (latent: strict=1 reports it)
//   lock-loop      one thread locks and unlocks a mutex a thousand times,
//                  after it started and joined a second thread
//   lock-loop-single  the same in a program that never started a thread
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "xstream_check/host_api.h"

extern "C" const xsc_host_api* xsc_runtime_host_api(void) __attribute__((weak));
extern "C" int library_lock(pthread_mutex_t* mutex);    // lock_library.c
extern "C" int library_unlock(pthread_mutex_t* mutex);

namespace {

alignas(4096) float staging[1024];  // the "pinned" buffer
float pageable[1024];
void* const device = reinterpret_cast<void*>(std::uintptr_t{0x7f0000000000});
void* const pooled = reinterpret_cast<void*>(std::uintptr_t{0x7f0000100000});
cudaStream_t copy_stream;

void host_read() {
  const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : nullptr;
  if (api != nullptr && api->version >= 3)
    api->host_access(reinterpret_cast<std::uintptr_t>(staging), sizeof staging, XSC_ACCESS_READ,
                     "host", 0);
}

void download(void* from, cudaStream_t stream) {
  void* dst = from == device ? static_cast<void*>(staging) : static_cast<void*>(pageable);
  copy_to_host(dst, from, sizeof staging, stream);
}

// A one-item queue of the program's own. The taker is asleep in the
// condition variable's wait before the buffer is made (until_taker_sleeps),
// so the handover goes through the wait, not a lock taken after.
struct Handover {
  std::mutex mutex;
  std::condition_variable ready_cv;
  bool ready = false;
  bool waiting = false;
  bool through_library = false;
  bool timed = false;

  void take() {
    std::unique_lock<std::mutex> lock(mutex);
    waiting = true;
    if (timed) ready_cv.wait_for(lock, std::chrono::seconds(60), [this] { return ready; });
    else ready_cv.wait(lock, [this] { return ready; });
  }
  void lock() {
    if (through_library) library_lock(mutex.native_handle());
    else mutex.lock();
  }
  void unlock() {
    if (through_library) library_unlock(mutex.native_handle());
    else mutex.unlock();
  }
  void until_taker_sleeps() {
    for (;;) {
      lock();
      const bool asleep = waiting;
      unlock();
      if (asleep) return;
    }
  }
  void put() {
    lock();
    ready = true;
    unlock();
    ready_cv.notify_one();
  }
};

int queue(const char* mode) {
  Handover handover;
  handover.through_library = std::strcmp(mode, "queue-library") == 0;
  handover.timed = std::strcmp(mode, "queue-timed") == 0;
  const bool early = std::strcmp(mode, "queue-early") == 0;
  std::thread reader([&] {
    handover.take();
    host_read();  // queue-read
  });
  handover.until_taker_sleeps();
  download(device, copy_stream);
  if (!early) stream_synchronize(copy_stream);
  handover.put();
  reader.join();
  if (early) stream_synchronize(copy_stream);
  return 0;
}

int free_handover(const char* mode, cudaStream_t allocation_stream) {
  void* buffer = pooled;
  cudaMallocAsync_v11020_params m = {&buffer, sizeof staging, allocation_stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &m);
  stream_synchronize(allocation_stream);
  const bool early = std::strcmp(mode, "free-early") == 0;
  Handover handover;
  std::thread worker([&] {
    download(buffer, copy_stream);  // free-use
    if (!early) stream_synchronize(copy_stream);
    std::unique_lock<std::mutex> lock(handover.mutex);
    handover.ready = true;
    lock.unlock();
    handover.ready_cv.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(handover.mutex);
    handover.ready_cv.wait(lock, [&] { return handover.ready; });
  }
  cudaFreeAsync_v11020_params f = {buffer, allocation_stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &f);  // free-site
  worker.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  copy_stream = make_stream(0x7530);
  cudaStream_t allocation_stream = make_stream(0x7531);
  device_malloc(reinterpret_cast<std::uintptr_t>(device), sizeof staging);
  pinned_alloc(staging, sizeof staging);
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, nullptr);

  int rc = 2;
  if (std::strncmp(mode, "queue", 5) == 0) {
    rc = queue(mode);
  } else if (std::strcmp(mode, "join") == 0) {
    std::thread downloader([] {
      download(device, copy_stream);
      stream_synchronize(copy_stream);
    });
    downloader.join();
    host_read();
    rc = 0;
  } else if (std::strcmp(mode, "shared") == 0) {
    std::shared_mutex lock;
    bool ready = false;
    std::thread reader([&] {
      for (;;) {
        std::shared_lock<std::shared_mutex> shared(lock);
        if (ready) break;
      }
      host_read();
    });
    usleep(1000);
    download(device, copy_stream);
    stream_synchronize(copy_stream);
    {
      std::unique_lock<std::shared_mutex> exclusive(lock);
      ready = true;
    }
    reader.join();
    rc = 0;
  } else if (std::strcmp(mode, "barrier") == 0) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, nullptr, 2);
    pthread_t thread;
    pthread_create(
        &thread, nullptr,
        [](void* arg) -> void* {
          download(device, copy_stream);
          stream_synchronize(copy_stream);
          pthread_barrier_wait(static_cast<pthread_barrier_t*>(arg));
          return nullptr;
        },
        &barrier);
    pthread_barrier_wait(&barrier);
    host_read();
    pthread_join(thread, nullptr);
    rc = 0;
  } else if (std::strncmp(mode, "free", 4) == 0) {
    rc = free_handover(mode, allocation_stream);
  } else if (std::strncmp(mode, "lock-loop", 9) == 0) {
    if (std::strcmp(mode, "lock-loop") == 0) std::thread([] {}).join();
    std::mutex mutex;
    for (int i = 0; i < 1000; ++i) {
      mutex.lock();
      mutex.unlock();
    }
    rc = 0;
  }
  if (rc == 2) {
    std::fprintf(stderr, "lock_handovers: unknown mode '%s'\n", mode);
    return 2;
  }
  std::printf("done\n");
  return rc;
}
