"""Two Python threads handing the GIL back and forth thousands of times,
in a process that fed the runtime an event (a stream made through the
stand-in CUPTI): the interpreter's own mutexes (its GIL's) are not the
program's synchronization and feed no edge; its threads' start and join
(semaphores) do."""
import ctypes
import sys
import threading

helper = ctypes.CDLL(sys.argv[1])
helper.helper_make_stream(ctypes.c_size_t(0x7530))
sys.setswitchinterval(1e-5)


def spin():
    total = 0
    for i in range(300000):
        total += i
    return total


threads = [threading.Thread(target=spin) for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("done")
