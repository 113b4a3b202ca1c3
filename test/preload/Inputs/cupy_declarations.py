"""Prints what the CuPy observer declares of kernels shaped like those CuPy
generates (cupy/_core/_kernel.pyx) and like users' RawKernels: one line per
kernel, each parameter read (R), written whole (W<itemsize>x<ndim>) or
unknown (-).

    python3 cupy_declarations.py AUTOLOAD_DIR"""
import sys

sys.path.insert(0, sys.argv[1])
import xstream_check_cupy as observer  # noqa: E402

UFUNC = '''
typedef float in0_type;
typedef float in1_type;
typedef float out0_type;
extern "C" __global__ void cupy_add__float32_float32_float32(
    const CArray<float, 1, 1, 1> _raw_in0, const CArray<float, 1, 1, 1> _raw_in1,
    CArray<float, 1, 1, 1> _raw_out0, CIndexer<1, 1> _ind) {
  ;
  #pragma unroll 1
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    const in0_type in0(_raw_in0[_ind.get()]);
const in1_type in1(_raw_in1[_ind.get()]);
out0_type out0;
out0 = in0 + in1;
;
_raw_out0[_ind.get()] = out0;
  };
  ;
}
'''
UFUNC_WHERE = '''
extern "C" __global__ void cupy_add__where(const CArray<double, 2, 0, 0> _raw_in0,
    const CArray<bool, 2, 0, 0> _raw__where, CArray<double, 2, 0, 0> _raw_out0, CIndexer<2, 0> _ind) {
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    if(!_raw__where[_ind.get()]) continue;
    const double in0(_raw_in0[_ind.get()]);
    double out0;
    out0 = in0 + in0;
    _raw_out0[_ind.get()] = out0;
  };
}
'''
ELEMENTWISE = '''
typedef complex<double> T;
extern "C" __global__ void squared_diff(const CArray<complex<double>, 1, 1, 1> _raw_x,
    const CArray<complex<double>, 1, 1, 1> _raw_y, CArray<complex<double>, 3, 0, 0> _raw_z,
    CArray<complex<double>, 1, 1, 1> _raw_kept, CIndexer<1, 1> _ind) {
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    const T &x = _raw_x[_ind.get()];
    const T &y = _raw_y[_ind.get()];
    T &z = _raw_z[_ind.get()];
    T &kept = _raw_kept[_ind.get()];
    z = (x - y) * (x - y);  // a comment: kept = 0;
    if (x == y) kept = z;
  };
}
'''
ELEMENTWISE_RAW_OUT = '''
extern "C" __global__ void gather(const CArray<float, 1, 1, 1> _raw_idx, CArray<float, 1, 0, 0> out,
    CIndexer<1, 1> _ind) {
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    out[i] = 1;
  };
}
'''
INCREMENT = '''
extern "C" __global__ void bump(CArray<int, 1, 1, 1> _raw_n, CArray<unsigned char, 1, 1, 1> _raw_m,
    CArray<float, 1, 1, 1> _raw_eq, CIndexer<1, 1> _ind) {
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    int &n = _raw_n[_ind.get()];
    unsigned char &m = _raw_m[_ind.get()];
    float &eq = _raw_eq[_ind.get()];
    ++n;
    m <<= 1;
    eq == 0;
  };
}
'''
RAW = '''
extern "C" __global__ void __launch_bounds__(256) saxpy(const float* __restrict__ x,
    float const *y, float* out, const float** table, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void opaque(float* p, int n) { p[0] = n; }
'''
REDUCTION = '''
extern "C" __global__ void cupy_sum(const CArray<float, 2, 0, 0> _raw_in0,
    CArray<float, 1, 1, 1> _raw_out0, CIndexer<2, 0> _in_ind, CIndexer<1, 1> _out_ind) {
  float _s = 0;
  _raw_out0[_out_ind.get()] = _s;
}
'''
UNKNOWN_TYPE = '''
extern "C" __global__ void custom(CArray<my_struct, 1, 1, 1> _raw_out0, CIndexer<1, 1> _ind) {
  CUPY_FOR(i, _ind.size()) { _ind.set(i); _raw_out0[_ind.get()] = my_struct(); }
}
'''


def show(param):
    access, itemsize, ndim = param
    if access == observer.PARAM_READ:
        return "R"
    if access == observer.PARAM_WRITES_ARRAY:
        return "W%dx%d" % (itemsize, ndim)
    return "-"


for source in (UFUNC, UFUNC_WHERE, ELEMENTWISE, ELEMENTWISE_RAW_OUT, INCREMENT, RAW, REDUCTION,
               UNKNOWN_TYPE):
    declared = observer.kernel_declarations(source)
    if not declared:
        print("(nothing declared)")
    for name, params in declared.items():
        print(name, " ".join(show(p) for p in params))
