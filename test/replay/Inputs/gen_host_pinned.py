# Writes the host-pinned traces of host-pinned.test; run from the repository root.
import json
D="test/replay/Inputs/"
A=140000000000000   # pinned staging buffer
DEV=139637976727552 # device buffer
def hdr(): return {"format":"xstream-trace","version":4,"pid":5151,"program":"python3 host_pinned.py"}
def stack(i, fn, line, f="/src/host_pinned.py"): return {"t":"stack","id":i,"frames":[{"fn":fn,"file":f,"line":line}]}
pre=[stack(1,"main",5), {"t":"stream_create","sk":1,"s":30000,"fl":"non_blocking"},
     stack(2,"main",6), {"t":"alloc","sk":2,"a":A,"n":4096,"s":0,"ak":"pinned"},
     stack(3,"main",7), {"t":"alloc","sk":3,"a":DEV,"n":4096,"s":0,"ak":"caching"}]
def hw(sk): return {"t":"use","sk":sk,"a":A,"n":4096,"s":0,"ac":"write","w":"host"}
def hr(sk): return {"t":"use","sk":sk,"a":A,"n":4096,"s":0,"ac":"read","w":"host"}
h2d=[stack(11,"main",11), {"t":"use","sk":11,"a":A,"n":4096,"s":30000,"ac":"read","w":"memcpy"},
     {"t":"use","sk":11,"a":DEV,"n":4096,"s":30000,"ac":"write","w":"memcpy"}]
d2h=[stack(21,"main",21), {"t":"use","sk":21,"a":DEV,"n":4096,"s":30000,"ac":"read","w":"memcpy"},
     {"t":"use","sk":21,"a":A,"n":4096,"s":30000,"ac":"write","w":"memcpy"}]
orders={
 "none": [],
 "stream_sync": [stack(30,"main",30),{"t":"stream_sync","sk":30,"s":30000}],
 "event_sync": [{"t":"record","s":30000,"e":777},stack(30,"main",30),{"t":"event_sync","sk":30,"e":777}],
 # what the runtime feeds for a cudaStreamQuery / cudaEventQuery that returned cudaSuccess
 "query": [{"t":"record","s":30000,"e":778},stack(30,"main",30),{"t":"event_sync","sk":30,"e":778}],
 "device_sync": [stack(30,"main",30),{"t":"device_sync","sk":30}],
 # cudaMemcpy(pageable, dev2, n, D2H) on the copy stream: returns once done
 "sync_copy": [stack(30,"main",30),{"t":"alloc","sk":30,"a":DEV+65536,"n":64,"s":30000,"ak":"caching"},
   {"t":"use","sk":30,"a":DEV+65536,"n":64,"s":30000,"ac":"read","w":"memcpy","sy":True},{"t":"stream_sync","sk":30,"s":30000}],
 # a synchronization with another stream orders nothing here
 "other_stream": [{"t":"stream_create","sk":1,"s":40000,"fl":"non_blocking"},stack(30,"main",30),{"t":"stream_sync","sk":30,"s":40000}],
}
def write(name, recs):
    with open(D+name,"w") as f:
        f.write(json.dumps(hdr(),separators=(",",":"))+"\n")
        for r in recs: f.write(json.dumps(r,separators=(",",":"))+"\n")
for o,recs in orders.items():
    # (a) refill the staging buffer on the host while the upload may still read it
    write(f"host_write_{o}.jsonl", pre+[stack(10,"main",10),hw(10)]+h2d+recs+[stack(13,"refill",13),hw(13)])
    # (b) read the download's destination on the host before it lands
    write(f"host_read_{o}.jsonl", pre+d2h+recs+[stack(22,"main",22),hr(22)])
# pinned memory freed (cudaFreeHost: device sync first) and allocated again: silent
write("host_pinned_free_reuse.jsonl", pre+[stack(10,"main",10),hw(10)]+h2d+
      [stack(40,"main",40),{"t":"device_sync","sk":40},{"t":"free","sk":40,"a":A,"s":0,"fk":"pinned"},
       stack(41,"main",41),{"t":"alloc","sk":41,"a":A,"n":4096,"s":0,"ak":"pinned"},stack(42,"main",42),hw(42)])
# PyTorch's pinned block freed while the upload is queued; the allocator gives it out
# again only after its event on the copy stream completed (a successful cudaEventQuery)
write("host_pinned_allocator_reuse.jsonl", pre+[stack(10,"main",10),hw(10)]+h2d+
      [{"t":"record","s":30000,"e":901},stack(40,"main",40),{"t":"event_sync","sk":40,"e":901},
       stack(42,"main",42),hw(42)])
# item 4: cudaMemcpy H2D from pageable memory on the legacy stream, then a kernel on a
# non-blocking stream reads the destination
write("sync_pageable_copy.jsonl", [{"t":"stack","id":1,"frames":[{"fn":"main","file":"/src/graphMemoryNodes.cu","line":120}]},
  {"t":"stream_create","sk":1,"s":50000,"fl":"non_blocking"},
  {"t":"alloc","sk":1,"a":DEV,"n":4096,"s":0,"ak":"sync"},
  {"t":"stack","id":2,"frames":[{"fn":"main","file":"/src/graphMemoryNodes.cu","line":125}]},
  {"t":"use","sk":2,"a":DEV,"n":4096,"s":0,"ac":"write","w":"memcpy","sy":True,"pg":True},
  {"t":"name","id":1,"str":"square(float const*, float*, int)"},
  {"t":"stack","id":3,"frames":[{"fn":"main","file":"/src/graphMemoryNodes.cu","line":130}]},
  {"t":"use","sk":3,"a":DEV,"n":0,"s":50000,"ac":"read","w":"kernel","nm":1}])
