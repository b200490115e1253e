// The GPU tier's kernel on one MPI rank of several: what changes in prelude.cu (ranks.py applies it).
// Each "after: TEXT" directive puts its lines after the line starting with TEXT, each "replace: TEXT"
// puts them in place of the definition starting with TEXT (to its closing brace at column 0), and
// "sub: OLD => NEW" replaces every OLD: each must match prelude.cu as written.
//@ after:     const i64* gq;
    i64* mb;                         // RANKS: the mailbox, page-locked host memory (targets/mpi/mailbox.py)
//@ after: __device__ __forceinline__ u64 tailm(i64 n)
// ---------------------------------------------------------------- RANKS: this rank's rows
// A table's rows and a slice's bits are split in blocks of whole RK_ALIGN-row units (partition.py;
// RK_ALIGN a multiple of 64, so a block starts at a word and a word is never split): rank RK_RANK of
// RK_SIZE holds rows [rk_start(n), rk_start(n) + rk_len(n)), as local words 0, 1, ...; every length a
// check reads (x.n, t.n) stays the global one, so a check fails alike on every rank, before any post.
__device__ __forceinline__ i64 rk_per(i64 n) {
    if (n <= 0) return 0;
    const i64 units = (n + RK_ALIGN - 1) / RK_ALIGN;
    return RK_ALIGN * ((units + RK_SIZE - 1) / RK_SIZE);
}
__device__ __forceinline__ i64 rk_start(i64 n) { const i64 s = RK_RANK * rk_per(n); return n <= 0 ? 0 : (s < n ? s : n); }
__device__ __forceinline__ i64 rk_len(i64 n) {
    if (n <= 0) return 0;
    const i64 e = (RK_RANK + 1) * rk_per(n);
    return (e < n ? e : n) - rk_start(n);
}
__device__ __forceinline__ i64 rk_nw(i64 n) { return nwords(rk_len(n)); }           // the rank's words of n bits
__device__ __forceinline__ u64 rk_tail(i64 n) { return tailm(rk_len(n)); }          // its last word's mask
// RANKS: a cross-rank step posted to the host (block 0's thread 0 only: the grid waits at its barrier).
// The payload first, then the request number with release order; the answer once the host has
// stored it in RK_DONE (mailbox.py's protocol). "No 1 here" of a MIN travels as RK_NONE (INT64_MAX):
// the host reduces signed int64.
#ifndef RK_SPIN
#define RK_SPIN()
#endif
#define RK_NONE 9223372036854775807LL
__device__ __noinline__ i64 rk_post(Ctx& c, i64 op, i64 value, i64 root, i64 count) {
    volatile i64* m = (volatile i64*)c.mb;
    m[RK_OP] = op; m[RK_VALUE] = value; m[RK_FLAGS] = 0; m[RK_ROOT] = root; m[RK_COUNT] = count;
    __threadfence_system();
    const i64 q = m[RK_REQ] + 1;
    m[RK_REQ] = q;
    while (m[RK_DONE] != q) { RK_SPIN(); }
    __threadfence_system();
    return m[RK_VALUE];
}
//@ replace: __device__ __forceinline__ bool intr_poll(Ctx& c) {
// RANKS: Ctrl-C seen on any rank, agreed at the same tick by every rank (one post: every kernel
// reaches its ticks alike), so that all stop together; a block never leaves a barrier alone,
// nor a full output buffer's wait for its host (out_room)
__device__ __forceinline__ u64 grid_red(Ctx& c, u64 v, int kind);
__device__ __forceinline__ bool intr_poll(Ctx& c) {
    return grid_red(c, (threadIdx.x == 0 && blockIdx.x == 0) ? (u64)intr_flag(c) : 0ULL, 0) != 0ULL;
}
//@ sub: if (leave && ++spins % BAR_POLL_INTR == 0 && intr_flag(c)) { stop = 2; break; } => if (leave && ++spins % BAR_POLL_INTR == 0 && false) { stop = 2; break; }
//@ sub: if (++spins % BAR_POLL_INTR == 0 && intr_flag(c)) { stop = 1; break; } => if (++spins % BAR_POLL_INTR == 0 && false) { stop = 1; break; }
//@ replace: __device__ __forceinline__ u64 grid_red(Ctx& c, u64 v, int kind) {
// RANKS: the grid's reduction, then the ranks': thread 0 posts the grid's answer (OR as a bitwise OR,
// add as a sum, min as a signed min with ALL as RK_NONE) and writes the ranks' answer in the ring's
// slot, which every thread reads after one more barrier
__device__ __forceinline__ u64 grid_red(Ctx& c, u64 v, int kind) {
    v = warp_red(v, kind);
    int s = c.ri;
    if (c.gt == 0) {
        int t = (s + 1) % 3;
        c.red[t] = 0ULL; c.red[3 + t] = 0ULL; c.red[6 + t] = ALL;
    }
    __shared__ u64 wred_[32];
    if ((threadIdx.x & 31) == 0) wred_[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        const int nw = (int)((blockDim.x + 31) >> 5);
        v = (int)threadIdx.x < nw ? wred_[threadIdx.x] : (kind == 2 ? ALL : 0ULL);
        v = warp_red(v, kind);
    }
    if (threadIdx.x == 0) {
        if (kind == 0) { if (v) atomicOr(&c.red[s], v); }
        else if (kind == 1) { if (v) atomicAdd(&c.red[3 + s], v); }
        else { if (v != ALL) atomicMin(&c.red[6 + s], v); }
    }
    gsync(c);
    if (c.gt == 0) {
        const u64 r = __ldcg(&c.red[kind * 3 + s]);
        const i64 x = kind == 2 ? (r == ALL ? RK_NONE : (i64)r) : (i64)r;
        const i64 a = rk_post(c, kind == 0 ? RK_OP_OR : kind == 1 ? RK_OP_SUM : RK_OP_MIN, x, 0, 0);
        c.red[kind * 3 + s] = kind == 2 ? (a == RK_NONE ? ALL : (u64)a) : (u64)a;
    }
    gsync(c);
    u64 r = __ldcg(&c.red[kind * 3 + s]);
    c.ri = (s + 1) % 3;
    return r;
}
//@ replace: template <int N> __device__ __forceinline__ void d_set(V<N>& x, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_set(V<N>& x, i64 b, i64 s) {
    i64 nw = rk_nw(x.n); u64 m = rk_tail(x.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; x.w[r] = w < nw - 1 ? ALL : (w == nw - 1 ? m : 0ULL); }
}
//@ replace: template <int N> __device__ __forceinline__ void d_not(V<N>& o, const V<N>& a, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_not(V<N>& o, const V<N>& a, i64 b, i64 s) {
    i64 nw = rk_nw(a.n); u64 m = rk_tail(a.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; o.w[r] = w < nw ? (~a.w[r] & (w == nw - 1 ? m : ALL)) : 0ULL; }
    o.n = a.n;
}
//@ replace: template <int N> __device__ __forceinline__ void d_load(V<N>& o, const u64* src, i64 n, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_load(V<N>& o, const u64* src, i64 n, i64 b, i64 s) {
    i64 nw = rk_nw(n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; o.w[r] = w < nw ? __ldcg(src + w) : 0ULL; }
    o.n = n;
}
//@ replace: template <int N> __device__ __forceinline__ void d_store(u64* dst, const V<N>& v, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_store(u64* dst, const V<N>& v, i64 b, i64 s) {
    i64 nw = rk_nw(v.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; if (w < nw) dst[w] = v.w[r]; }
}
//@ replace: template <int N> __device__ __forceinline__ void d_load_block(V<N>& o, const u64* src, i64 n, i64 ln, i64 s) {
template <int N> __device__ __forceinline__ void d_load_block(V<N>& o, const u64* src, i64 n, i64 ln, i64 s) {
#ifdef WARP_LOADS
    d_load(o, src, n, ln, s);
#else
    __shared__ u64 sh_[N * 32];
    i64 nw = rk_nw(n);
    __syncthreads();                  // an earlier call's readers are done with sh_
    for (int w = threadIdx.x; w < N * 32; w += blockDim.x) sh_[w] = w < nw ? __ldcg(src + w) : 0ULL;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < N; ++r) o.w[r] = sh_[ln + r * s];
    o.n = n;
#endif
}
//@ replace: template <int N, bool GRID> __device__ __forceinline__ i64 d_fnd(Ctx& c, const V<N>& x, i64 b, i64 s) {
// RANKS: the first 1 as a global row (the block's first row added) before the ranks' MIN
template <int N, bool GRID> __device__ __forceinline__ i64 d_fnd(Ctx& c, const V<N>& x, i64 b, i64 s) {
    const i64 s0 = rk_start(x.n);
    u64 best = ALL;
#pragma unroll
    for (int r = 0; r < N; ++r) {
        if (x.w[r] != 0ULL && best == ALL) best = (u64)(s0 + (b + r * s) * 64 + __ffsll((long long)x.w[r]));
    }
    u64 p = red<GRID>(c, best, 2);
    return p == ALL ? 0 : (i64)p;
}
//@ replace: template <int N> __device__ __forceinline__ void d_clear_bit(V<N>& x, i64 p, i64 b, i64 s) {
// RANKS: p is a global position; only its owner's word changes
template <int N> __device__ __forceinline__ void d_clear_bit(V<N>& x, i64 p, i64 b, i64 s) {
    const i64 q = p - rk_start(x.n);
    if (p <= 0 || q <= 0 || q > rk_len(x.n)) return;
    i64 wi = (q - 1) >> 6;
#pragma unroll
    for (int r = 0; r < N; ++r) if (b + r * s == wi) x.w[r] &= ~(1ULL << ((q - 1) & 63));
}
//@ replace: template <int N> __device__ __forceinline__ void d_only_bit(V<N>& o, const V<N>& x, i64 p, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_only_bit(V<N>& o, const V<N>& x, i64 p, i64 b, i64 s) {
    const i64 q = p - rk_start(x.n);
    i64 wi = (p > 0 && q > 0 && q <= rk_len(x.n)) ? (q - 1) >> 6 : -1;
#pragma unroll
    for (int r = 0; r < N; ++r) o.w[r] = (b + r * s == wi) ? (1ULL << ((q - 1) & 63)) : 0ULL;
    o.n = x.n;
}
//@ replace: template <int N, bool GRID> __device__ __forceinline__ u64 d_word_at(Ctx& c, const V<N>& x, i64 wi, i64 b, i64 s) {
// RANKS: global word wi of a slice (the grid's form only: a parallel for reading a slice's bit is
// not compiled on ranks); its owner's, the others' 0, ORed over the grid and the ranks
template <int N, bool GRID> __device__ __forceinline__ u64 d_word_at(Ctx& c, const V<N>& x, i64 wi, i64 b, i64 s) {
    const i64 wl = wi - (rk_start(x.n) >> 6);
    const bool mine = 0 <= wl && wl < rk_nw(x.n);
    u64 v = 0ULL;
#pragma unroll
    for (int r = 0; r < N; ++r) if (mine && b + r * s == wl) v = x.w[r];
    return red<GRID>(c, v, 0);
}
//@ replace: template <int N> __device__ __forceinline__ void d_put_bit(V<N>& x, i64 i, i64 bit, i64 b, i64 s) {
template <int N> __device__ __forceinline__ void d_put_bit(V<N>& x, i64 i, i64 bit, i64 b, i64 s) {
    const i64 q = i - rk_start(x.n);
    if (q <= 0 || q > rk_len(x.n)) return;
    i64 wi = (q - 1) >> 6; u64 m = 1ULL << ((q - 1) & 63);
#pragma unroll
    for (int r = 0; r < N; ++r) if (b + r * s == wi) x.w[r] = bit ? (x.w[r] | m) : (x.w[r] & ~m);
}
//@ replace: template <int N, bool GRID> __device__ __forceinline__ int d_cmp(Ctx& c, const V<N>& a, const V<N>& y, i64 b, i64 s) {
// RANKS: the first differing bit as a global position (blocks are in row order across the ranks)
template <int N, bool GRID> __device__ __forceinline__ int d_cmp(Ctx& c, const V<N>& a, const V<N>& y, i64 b, i64 s) {
    const i64 s0 = rk_start(a.n);
    u64 best = ALL;
#pragma unroll
    for (int r = 0; r < N; ++r) {
        u64 d = a.w[r] ^ y.w[r];
        if (d != 0ULL && best == ALL) {
            int z = __ffsll((long long)d) - 1;
            best = ((u64)(s0 + (b + r * s) * 64 + z) << 1) | ((a.w[r] >> z) & 1ULL);
        }
    }
    u64 p = red<GRID>(c, best, 2);
    if (p == ALL) return 0;
    return (p & 1ULL) ? 1 : -1;
}
//@ replace: template <int N> __device__ __forceinline__ void r_row_set(const Tb& t, i64 i, const V<N>& v, i64 b, i64 s) {
// RANKS: the owner of row i writes it (its local row), the other ranks nothing
template <int N> __device__ __forceinline__ void r_row_set(const Tb& t, i64 i, const V<N>& v, i64 b, i64 s) {
    const i64 q = i - 1 - rk_start(t.n);
    if (q < 0 || q >= rk_len(t.n)) return;
    i64 w = q >> 6;
    if ((w - b) % s != 0 || w < b) return;
    int sh = (int)(q & 63); u64 m = ~(1ULL << sh);
    for (i64 c = 0; c < t.k; ++c) {
        u64* p = t.d + c * t.W + w;
        *p = (ldt(p) & m) | (((v.w[c >> 6] >> (c & 63)) & 1ULL) << sh);
    }
}
// RANKS: ROW(i, T): the owner's blocks read its local row, thread 0 broadcasts it (one post: the
// host's MPI_Bcast from the owner) and puts the row in scratch region 0, which every thread reads
template <int N> __device__ __forceinline__ void rk_row_get(Ctx& c, V<N>& o, const Tb& t, i64 i) {
    const i64 q = i - 1 - rk_start(t.n);
    if (0 <= q && q < rk_len(t.n)) r_row_get_grid(o, t, q + 1);
    else { for (int w = 0; w < N; ++w) o.w[w] = 0ULL; }
    const i64 kw = nwords(t.k);
    if (c.gt == 0) {
        volatile i64* m = (volatile i64*)c.mb;
        for (i64 w = 0; w < kw; ++w) m[RK_PAYLOAD + w] = (i64)o.w[w < N ? w : 0];
        rk_post(c, RK_OP_BCAST, 0, (i - 1) / rk_per(t.n), kw);
        for (i64 w = 0; w < kw; ++w) c.scr[w] = (u64)m[RK_PAYLOAD + w];
    }
    gsync(c);
    for (int w = 0; w < N; ++w) o.w[w] = w < kw ? __ldcg(c.scr + w) : 0ULL;
    o.n = t.k;
    gsync(c);
}
// RANKS: a slice made a word: every rank's words (stored in scratch region 0 by their threads) go to
// the host in one post, which all-gathers the blocks and answers the whole slice's words
template <int N, int K> __device__ __forceinline__ void rk_gather(Ctx& c, V<K>& o, const V<N>& x) {
    d_store(c.scr, x, c.gt, c.G);
    gsync(c);
    const i64 lw = rk_nw(x.n), nw = nwords(x.n);
    if (c.gt == 0) {
        volatile i64* m = (volatile i64*)c.mb;
        for (i64 w = 0; w < lw; ++w) m[RK_PAYLOAD + w] = (i64)__ldcg(c.scr + w);
        rk_post(c, RK_OP_GATHER, x.n, 0, lw);
        for (i64 w = 0; w < nw; ++w) c.scr[w] = (u64)m[RK_PAYLOAD + w];
    }
    gsync(c);
    o.n = x.n;
    for (int w = 0; w < K; ++w) o.w[w] = w < nw ? __ldcg(c.scr + w) : 0ULL;
    gsync(c);
}
