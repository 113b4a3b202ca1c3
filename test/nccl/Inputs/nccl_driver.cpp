// Makes a scripted series of NCCL calls with made-up pointers (the fake
// libnccl never dereferences them) and prints each call's result, so a test
// can compare what the application sees with and without the interposers.
#include <nccl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void* at(std::uintptr_t a) { return reinterpret_cast<void*>(a); }
const auto kComm = reinterpret_cast<ncclComm_t>(std::uintptr_t{0xc0});
const auto kStream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x77});

void say(const char* what, ncclResult_t r) {
  std::printf("%s -> %d\n", what, static_cast<int>(r));
}

void set_result(int r) {
  char text[16];
  std::snprintf(text, sizeof text, "%d", r);
  setenv("FAKE_NCCL_RESULT", text, 1);
}

}  // namespace

// Built as a shared library (-DNCCL_DRIVER_LIBRARY) the same script runs
// from a library that dlopen_driver.cpp loads with RTLD_LOCAL.
#ifdef NCCL_DRIVER_LIBRARY
extern "C" __attribute__((visibility("default"))) int nccl_driver_main(int argc, char** argv) {
#else
int main(int argc, char** argv) {
#endif
  const char* only = argc > 1 ? argv[1] : "all";
  bool all = std::strcmp(only, "all") == 0;
  if (all || std::strcmp(only, "collectives") == 0) {
    std::printf("== out of place\n");
    say("ncclAllReduce", ncclAllReduce(at(0x1000), at(0x2000), 256, ncclFloat32, ncclSum, kComm, kStream));
    std::printf("== in place\n");
    say("ncclAllReduce", ncclAllReduce(at(0x3000), at(0x3000), 256, ncclFloat32, ncclSum, kComm, kStream));
    std::printf("== allgather\n");
    say("ncclAllGather", ncclAllGather(at(0x4000), at(0x5000), 16, ncclFloat16, kComm, kStream));
    std::printf("== allgather in place, rank 1\n");
    setenv("FAKE_NCCL_RANK", "1", 1);
    say("ncclAllGather", ncclAllGather(at(0x6000 + 32), at(0x6000), 16, ncclFloat16, kComm, kStream));
    std::printf("== reducescatter\n");
    say("ncclReduceScatter", ncclReduceScatter(at(0x7000), at(0x8000), 8, ncclInt64, ncclMax, kComm, kStream));
    std::printf("== bcast\n");
    say("ncclBcast", ncclBcast(at(0x9000), 10, ncclUint8, 0, kComm, kStream));
    std::printf("== broadcast on a non-root rank\n");
    say("ncclBroadcast", ncclBroadcast(at(0xa000), at(0xb000), 4, ncclFloat64, 0, kComm, kStream));
    std::printf("== reduce on a non-root rank\n");
    say("ncclReduce", ncclReduce(at(0xc000), at(0xd000), 4, ncclBfloat16, ncclSum, 0, kComm, kStream));
    setenv("FAKE_NCCL_RANK", "0", 1);
    std::printf("== reduce on the root\n");
    say("ncclReduce", ncclReduce(at(0xc000), at(0xd000), 4, ncclBfloat16, ncclSum, 0, kComm, kStream));
    std::printf("== bcast on the root\n");
    say("ncclBcast", ncclBcast(at(0x9000), 10, ncclUint8, 0, kComm, kStream));
    std::printf("== broadcast in place on the root\n");
    say("ncclBroadcast", ncclBroadcast(at(0xa000), at(0xa000), 4, ncclFloat64, 0, kComm, kStream));
    std::printf("== broadcast out of place on the root\n");
    say("ncclBroadcast", ncclBroadcast(at(0xa000), at(0xb000), 4, ncclFloat64, 0, kComm, kStream));
    setenv("FAKE_NCCL_RANK", "-1", 1);  // a rank NCCL cannot name
    std::printf("== bcast, rank unknown\n");
    say("ncclBcast", ncclBcast(at(0x9000), 10, ncclUint8, 0, kComm, kStream));
    std::printf("== broadcast in place, rank unknown\n");
    say("ncclBroadcast", ncclBroadcast(at(0xa000), at(0xa000), 4, ncclFloat64, 0, kComm, kStream));
    std::printf("== reduce, rank unknown\n");
    say("ncclReduce", ncclReduce(at(0xc000), at(0xd000), 4, ncclBfloat16, ncclSum, 0, kComm, kStream));
    setenv("FAKE_NCCL_RANK", "0", 1);
    std::printf("== send and recv\n");
    say("ncclSend", ncclSend(at(0xe000), 3, ncclInt32, 1, kComm, kStream));
    say("ncclRecv", ncclRecv(at(0xf000), 3, ncclUint32, 1, kComm, kStream));
    std::printf("== alltoall\n");
    say("ncclAlltoAll", ncclAlltoAll(at(0x10000), at(0x11000), 2, ncclFloat32, kComm, kStream));
    std::printf("== unknown datatype\n");
    say("ncclAllReduce", ncclAllReduce(at(0x12000), at(0x12000), 5, static_cast<ncclDataType_t>(99), ncclSum, kComm, kStream));
    std::printf("== zero count\n");
    say("ncclAllReduce", ncclAllReduce(at(0x13000), at(0x14000), 0, ncclFloat32, ncclSum, kComm, kStream));
    std::printf("== null stream\n");
    say("ncclSend", ncclSend(at(0x15000), 1, ncclInt8, 1, kComm, nullptr));
  }
  if (all || std::strcmp(only, "errors") == 0) {
    std::printf("== failing call\n");
    set_result(ncclInvalidArgument);
    say("ncclAllReduce", ncclAllReduce(at(0x1000), at(0x2000), 1, ncclFloat32, ncclSum, kComm, kStream));
    std::printf("== in progress\n");
    set_result(ncclInProgress);
    say("ncclAllReduce", ncclAllReduce(at(0x1000), at(0x2000), 1, ncclFloat32, ncclSum, kComm, kStream));
    set_result(ncclSuccess);
  }
  if (all || std::strcmp(only, "groups") == 0) {
    std::printf("== group\n");
    say("ncclGroupStart", ncclGroupStart());
    say("ncclSend", ncclSend(at(0x20000), 4, ncclFloat32, 1, kComm, kStream));
    say("ncclRecv", ncclRecv(at(0x21000), 4, ncclFloat32, 1, kComm, kStream));
    std::printf("-- before group end\n");
    say("ncclGroupEnd", ncclGroupEnd());
    std::printf("== nested group\n");
    say("ncclGroupStart", ncclGroupStart());
    say("ncclGroupStart", ncclGroupStart());
    say("ncclAllReduce", ncclAllReduce(at(0x22000), at(0x22000), 2, ncclFloat32, ncclSum, kComm, kStream));
    say("ncclGroupEnd", ncclGroupEnd());
    std::printf("-- inner group ended\n");
    say("ncclGroupEnd", ncclGroupEnd());
    std::printf("== failing group end\n");
    say("ncclGroupStart", ncclGroupStart());
    say("ncclAllReduce", ncclAllReduce(at(0x23000), at(0x23000), 2, ncclFloat32, ncclSum, kComm, kStream));
    set_result(ncclInternalError);
    say("ncclGroupEnd", ncclGroupEnd());
    set_result(ncclSuccess);
    std::printf("== after failed group\n");
    say("ncclSend", ncclSend(at(0x24000), 1, ncclFloat32, 1, kComm, kStream));
  }
  return 0;
}
