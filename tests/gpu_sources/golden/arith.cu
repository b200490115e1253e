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
    bool s4;
    unsigned long long v5[R];
    bool s6;
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
    s2 = v_loop;
    if (s2 == 0) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    s3 = ((NBITS) + (1LL));
    if (s3 == 0) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
    ps_v_q = ((((((((((ps_v_c) * (7LL))) + (NBITS))) - (k_v_p))) / s2)) + ((((-(ps_v_c))) - (((-(ps_v_c))) / s3) * s3)));
    s4 = (!(((ps_v_q) < (0LL))));
    if (s4) {
        if (v_loop < 1 || v_loop > k_v_p) { if (threadIdx.x == 0) atomicExch(err, 1ULL); goto done; }
        if (threadIdx.x == 0) lc[24]++;
        for (int r = 0; r < R; ++r) { long long w = threadIdx.x + (long long)r * blockDim.x; v5[r] = (w < W) ? (tb_v_p[(v_loop - 1) * W + w]) : 0ULL; }
        if (threadIdx.x == 0) lc[9]++;
        { int any = 0; for (int r = 0; r < R; ++r) any |= (v5[r] != 0ULL); s6 = __syncthreads_or(any) != 0; }
        s4 = s6;
    }
    ps_v_big = s4;
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
