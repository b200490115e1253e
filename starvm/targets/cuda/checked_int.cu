// ---------------------------------------------------------------- checked integers (Star's are unbounded)
__device__ __forceinline__ bool add_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a + (u64)b); return ((a ^ r) & (b ^ r)) < 0; }
__device__ __forceinline__ bool sub_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a - (u64)b); return ((a ^ b) & (a ^ r)) < 0; }
__device__ __forceinline__ bool mul_ovf(i64 a, i64 b, i64& r) {
    r = (i64)((u64)a * (u64)b);
    if (a == 0 || b == 0) return false;
    i64 hi = __mul64hi(a, b);
    return !((hi == 0 && r >= 0) || (hi == -1 && r < 0));
}
