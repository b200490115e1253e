typedef unsigned long long u64;
typedef long long i64;
// ---------------------------------------------------------------- checked integers (Star's are unbounded)
__device__ __forceinline__ bool add_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a + (u64)b); return ((a ^ r) & (b ^ r)) < 0; }
__device__ __forceinline__ bool sub_ovf(i64 a, i64 b, i64& r) { r = (i64)((u64)a - (u64)b); return ((a ^ b) & (a ^ r)) < 0; }
__device__ __forceinline__ bool mul_ovf(i64 a, i64 b, i64& r) {
    r = (i64)((u64)a * (u64)b);
    if (a == 0 || b == 0) return false;
    i64 hi = __mul64hi(a, b);
    return !((hi == 0 && r >= 0) || (hi == -1 && r < 0));
}
extern "C" __global__ void star_forall(long long start, long long m, long long W, long long NBITS, unsigned long long LASTMASK, unsigned long long* counts, unsigned long long* err, unsigned long long* tb_snap_p, long long k_snap_p, int os_v_flag, unsigned long long* sv_v_m, unsigned long long* tb_v_p, long long k_v_p) {
    __shared__ unsigned long long sh_word, sh_count;
    unsigned long long lc[28] = {0};
    long long v_loop = start + (long long)blockIdx.x;
    bool ps_v_same = false;
    unsigned long long pv_v_v[R];
    unsigned long long v0[R];
    unsigned long long v1[R];
    unsigned long long v2[R];
    unsigned long long v3[R];
    unsigned long long v4[R];
    bool s5;
    bool s6;
    bool s7;
    unsigned long long v8[R];
    long long s9;
    long long s10;
    unsigned long long v11[R];
    unsigned long long v12[R];
    unsigned long long v13[R];
    bool s14;
    unsigned long long v15[R];
    if (v_loop < 1 || v_loop > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v0[r] = (w < W) ? (tb_snap_p[(v_loop - 1) * W + w]) : 0ULL; }
    if (threadIdx.x == 0) lc[13]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v1[r] = (w < W) ? (~v0[r] & ((w == W - 1) ? LASTMASK : ~0ULL)) : 0ULL; }
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v2[r] = (w < W) ? (sv_v_m[w]) : 0ULL; }
    if (threadIdx.x == 0) lc[10]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v3[r] = (w < W) ? (v1[r] & v2[r]) : 0ULL; }
    for (int r = 0; r < R; ++r) pv_v_v[r] = v3[r];
    if (v_loop < 1 || v_loop > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v4[r] = (w < W) ? (tb_snap_p[(v_loop - 1) * W + w]) : 0ULL; }
    if (threadIdx.x == 0) lc[16]++;
    { int same = 1; for (int r = 0; r < R; ++r) same &= (pv_v_v[r] == v4[r]); s5 = __syncthreads_and(same) != 0; }
    ps_v_same = s5;
    s6 = ps_v_same;
    if (!s6) {
        s7 = os_v_flag;
        if (s7) {
            for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v8[r] = (w < W) ? (sv_v_m[w]) : 0ULL; }
            s9 = v_loop;
            if (s9 < 1 || s9 > NBITS) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
            if (threadIdx.x == 0) lc[2]++;
            { long long bw = (s9 - 1) >> 6; if (threadIdx.x == bw % blockDim.x) sh_word = v8[bw / blockDim.x]; }
            __syncthreads();
            s10 = (long long)((sh_word >> ((s9 - 1) & 63)) & 1ULL);
            __syncthreads();
            s7 = (s10 == 1LL);
        }
        s6 = s7;
    }
    if (s6) {
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v11[r] = (w < W) ? (sv_v_m[w]) : 0ULL; }
        if (threadIdx.x == 0) lc[12]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v12[r] = (w < W) ? (pv_v_v[r] ^ v11[r]) : 0ULL; }
        for (int r = 0; r < R; ++r) pv_v_v[r] = v12[r];
    } else {
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v13[r] = (w < W) ? (sv_v_m[w]) : 0ULL; }
        if (threadIdx.x == 0) lc[17]++;
        { int same = 1; for (int r = 0; r < R; ++r) same &= (pv_v_v[r] == v13[r]); s14 = __syncthreads_and(same) == 0; }
        if (s14) {
            if (v_loop < 1 || v_loop > k_snap_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
            if (threadIdx.x == 0) lc[24]++;
            for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v15[r] = (w < W) ? (tb_snap_p[(v_loop - 1) * W + w]) : 0ULL; }
            for (int r = 0; r < R; ++r) pv_v_v[r] = v15[r];
        }
    }
    if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[25]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; if (w < W) tb_v_p[(v_loop - 1) * W + w] = pv_v_v[r]; }
done:
    if (threadIdx.x == 0) {
        if (lc[2]) atomicAdd(&counts[2], lc[2]);
        if (lc[10]) atomicAdd(&counts[10], lc[10]);
        if (lc[12]) atomicAdd(&counts[12], lc[12]);
        if (lc[13]) atomicAdd(&counts[13], lc[13]);
        if (lc[16]) atomicAdd(&counts[16], lc[16]);
        if (lc[17]) atomicAdd(&counts[17], lc[17]);
        if (lc[24]) atomicAdd(&counts[24], lc[24]);
        if (lc[25]) atomicAdd(&counts[25], lc[25]);
    }
}
