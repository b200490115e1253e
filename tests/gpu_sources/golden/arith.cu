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
extern "C" __global__ void star_forall(long long start, long long m, long long W, long long NBITS, unsigned long long LASTMASK, unsigned long long* counts, unsigned long long* err, unsigned long long* sv_v_m, unsigned long long* tb_v_p, long long k_v_p, unsigned long long* sv_v_z) {
    __shared__ unsigned long long sh_word, sh_count;
    unsigned long long lc[28] = {0};
    long long v_loop = start - (long long)blockIdx.x;
    bool ps_v_big = false;
    long long ps_v_c = 0;
    long long ps_v_q = 0;
    unsigned long long v0[R];
    long long s1;
    long long s2;
    long long s3;
    long long s4;
    long long s5;
    long long s6;
    long long s7;
    long long s8;
    long long s9;
    bool s10;
    bool s11;
    unsigned long long v12[R];
    bool s13;
    if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (threadIdx.x == 0) lc[24]++;
    for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v0[r] = (w < W) ? (tb_v_p[(v_loop - 1) * W + w]) : 0ULL; }
    if (threadIdx.x == 0) lc[6]++;
    if (threadIdx.x == 0) sh_count = 0ULL;
    __syncthreads();
    { unsigned long long c = 0; for (int r = 0; r < R; ++r) c += __popcll(v0[r]); atomicAdd(&sh_count, c); }
    __syncthreads();
    s1 = (long long)sh_count;
    __syncthreads();
    ps_v_c = s1;
    if (mul_ovf(ps_v_c, 7LL, s2)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (add_ovf(s2, NBITS, s3)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (sub_ovf(s3, k_v_p, s4)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (v_loop == 0) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (v_loop == -1 && s4 == (-9223372036854775807LL - 1)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    s5 = (s4 / v_loop);
    if (ps_v_c == (-9223372036854775807LL - 1)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    s6 = (-ps_v_c);
    if (add_ovf(NBITS, 1LL, s7)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    if (s7 == 0) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    s8 = (s7 == -1 ? 0LL : (s6 - (s6 / s7) * s7));
    if (add_ovf(s5, s8, s9)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    ps_v_q = s9;
    s11 = (ps_v_q < 0LL);
    s10 = (!s11);
    if (s10) {
        if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[24]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v12[r] = (w < W) ? (tb_v_p[(v_loop - 1) * W + w]) : 0ULL; }
        if (threadIdx.x == 0) lc[9]++;
        { int any = 0; for (int r = 0; r < R; ++r) any |= (v12[r] != 0ULL); s13 = __syncthreads_or(any) != 0; }
        s10 = s13;
    }
    ps_v_big = s10;
    if (ps_v_big) {
        if (v_loop < 1 || v_loop > NBITS || (1LL != 0 && 1LL != 1)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[3]++;
        if (threadIdx.x == 0) { unsigned long long m = 1ULL << ((v_loop - 1) & 63); if (1LL) atomicOr(&sv_v_z[(v_loop - 1) >> 6], m); else atomicAnd(&sv_v_z[(v_loop - 1) >> 6], ~m); }
    } else {
        if (v_loop < 1 || v_loop > NBITS || (0LL != 0 && 0LL != 1)) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[3]++;
        if (threadIdx.x == 0) { unsigned long long m = 1ULL << ((v_loop - 1) & 63); if (0LL) atomicOr(&sv_v_z[(v_loop - 1) >> 6], m); else atomicAnd(&sv_v_z[(v_loop - 1) >> 6], ~m); }
    }
done:
    if (threadIdx.x == 0) {
        if (lc[3]) atomicAdd(&counts[3], lc[3]);
        if (lc[6]) atomicAdd(&counts[6], lc[6]);
        if (lc[9]) atomicAdd(&counts[9], lc[9]);
        if (lc[24]) atomicAdd(&counts[24], lc[24]);
    }
}
