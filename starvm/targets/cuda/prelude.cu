#define ALL 0xFFFFFFFFFFFFFFFFULL
#define FULLMASK 0xFFFFFFFFu
#ifndef LANES
#define LANES 32
#endif

// Y := E; if SOME(Y) then ...: with the switch RECOMPUTE the branch computes Y again from E
// (statements.py: kept_across) instead of Y being kept across the barrier; off by default: MIN's
// body over 2^27 rows on the H100 took 0.70 ms a kernel with it, 0.545 without (R = 64, 255
// registers either way: the column's 64 words a thread are loaded before they are combined)
#if defined(RECOMPUTE)
#undef RECOMPUTE
#define RECOMPUTE 1
#else
#define RECOMPUTE 0
#endif
// ...or its words put in the block's shared memory (TPB: the most threads a block of this
// instance has), where R words of all of them fit 32 KB for every such Y (NYSH); switch NO_YSH
#if defined(NO_YSH)
#define YSH 0
#else
#define YSH (R * TPB * 8 * NYSH <= 32768)
#endif

// a pivot loop's own columns kept in registers (parallel_for.py: keeps_own_columns): OWNC slots a
// warp, each tagged with the iteration whose column it holds (OC_NONE: none); switch OWN_LOADS
#if defined(OWN_LOADS)
#undef OWNC
#define OWNC 0
#endif
#define OC_NONE (-9223372036854775807LL - 1)

template <int N> struct V { u64 w[N]; i64 n; };
struct Tb { u64* d; i64 n; i64 k; i64 W; };
struct Ln { i64 n; };      // the length of a fused slice expression's operand (expressions.py: fused_slice)
#if defined(UNFUSED)
#undef UNFUSED
#define UNFUSED 1
#else
#define UNFUSED 0
#endif

struct Ctx {
    i64* st; i64* cnt; i64* ob; i64 obcap; u64* red; u64* bar; u64* scr; i64 caps;
    i64 gt; i64 G; i64 left; i64 op; int sp; int failed; int ri;
    i64 opub; i64 oround;   // output: the finished write calls' words in the buffer, its round (out_pub)
    unsigned int gen;   // GEN_BARRIER: the generation word as this block last saw it (thread 0)
    u64 nb;             // arrivals that complete the next barrier (thread 0)
    i64 cn[NKINDS];     // steps by kind of the grid's control flow (the same in every thread)
    i64 wn[NKINDS];     // steps of this warp's `parallel for` iterations (lane 0's are flushed)
    const i64* intr;    // Ctrl-C: the host's flag (intr_poll)
    int dirty;          // since the last grid barrier (uniform): 1 a table written, 2 a row read (statements.py)
    u64* pool; i64 pcap; i64 ptop;   // local tables: a bump allocator in the host's pool (words; routine.py)
    i64 stk0; i64 sroom; int spb;    // recursion: the kernel frame's address, the stack room, calls outside
    const i64* gq;                   // the graph's scalars the host read (GRAPH_N, ...: routine.py graph_reads)
};

__device__ __forceinline__ i64 nwords(i64 n) { return (n + 63) >> 6; }
// x, its value unknown to the compiler from here on (nothing computed from it is moved out
// of the loop it is in: expressions.py: fused_slice)
__device__ __forceinline__ i64 opaque(i64 x) {
#if defined(__CUDA_ARCH__)
    asm volatile("" : "+l"(x));
#endif
    return x;
}
// a table word, from L2 (__ldcg), where other SMs' writes are visible after a barrier (through
// L1 when the grid is one block measured 0.10 instead of 0.19 us an iteration of the COL/or/COL
// loop but 3.8 instead of 2.8 s for WARSHALL-C n = 5000: not taken)
__device__ __forceinline__ u64 ldt(const u64* p) { return __ldcg(p); }
__device__ __forceinline__ u64 tailm(i64 n) { return (n & 63) ? ((1ULL << (n & 63)) - 1ULL) : ALL; }

__device__ __forceinline__ void fail_(Ctx& c, i64 site, i64 code, i64 a, i64 b, i64 cc, i64 d) {
    if (c.gt == 0) {
        c.st[S_NODE] = site; c.st[S_CODE] = code; c.st[S_A] = a; c.st[S_B] = b; c.st[S_C] = cc; c.st[S_D] = d;
        c.st[S_SP] = c.sp;
    }
    c.failed = 1;
}
#define FAIL(site, code, a, b, cc, d) { fail_(c_, site, code, a, b, cc, d); return; }
#define UNASSIGNED(site, n) FAIL(site, E_UNASSIGNED, n, 0, 0, 0)

// ---------------------------------------------------------------- Ctrl-C
// Every POLL_EVERY-th step (a tick: a loop's back edge or a call, where the step limit is
// checked) thread 0 of each block reads the host's flag, a word of page-locked host memory the
// kernel reads directly (jit/cuda_runtime.py; a SIGINT sets it, jit/interrupts.py), and the
// whole block stops on what it read (one __syncthreads_or), so control flow stays uniform in a
// block. Blocks may see the flag at different ticks: one that waits at a grid barrier for
// blocks that stopped leaves it once the flag is set (gsync_or, every BAR_POLL_INTR-th spin)
// and stops at its next tick (intr_soon), so no block waits for ever.
#ifndef POLL_EVERY
#define POLL_EVERY 1024     // a power of two (the CPU run of the kernels tests with fewer)
#endif
#define BAR_POLL_INTR 1024
__device__ __forceinline__ int intr_flag(const Ctx& c) { return *(volatile const i64*)c.intr != 0; }
__device__ __forceinline__ bool intr_poll(Ctx& c) {
    return __syncthreads_or(threadIdx.x == 0 ? intr_flag(c) : 0) != 0;
}
// the step count brought to one past a multiple of POLL_EVERY: the next tick polls
__device__ __forceinline__ void intr_soon(Ctx& c) { c.left = (c.left & ~(i64)(POLL_EVERY - 1)) + 1; }

// ---------------------------------------------------------------- the grid barrier and reductions
// gsync_or: a grid barrier that also returns the OR of ``f`` over the grid, at no extra cost.
// bar[0] (zeroed by the host before every launch) counts arrivals in its low 40 bits and
// arriving blocks that bring a 1 above them; barrier b is passed once the count reaches
// b * blocks (c.nb), so a block's arrival atomic returns the count and it spins on the same
// word: no reset and no separate release write by the last arrival (the generation-word
// barrier of before cost a fence and an exchange more a barrier: the switch GEN_BARRIER).
// The flag is sticky: a block that sees it leaves at this barrier (E_RERUN), and every
// block sees it at the same barrier, since it arrives with the arrival that completes it.
#define BAR_COUNT 0xFFFFFFFFFFULL
// the arrival releases what the block wrote, and the load that sees the barrier complete
// acquires what the others wrote (atom.add.release.gpu, ld.acquire.gpu; the barrier alone on
// the H100: 1.01 us against 1.33 with a full fence before the atomicAdd and after the spin of
// volatile loads, which the switch FENCE_BARRIER brings back; the CPU run of the kernels
// has no PTX and takes that form)
#if defined(__CUDA_ARCH__) && !defined(FENCE_BARRIER)
__device__ __forceinline__ u64 bar_arrive(u64* p, u64 add) {
    u64 v;
    asm volatile("atom.add.release.gpu.u64 %0, [%1], %2;" : "=l"(v) : "l"(p), "l"(add) : "memory");
    return v;
}
__device__ __forceinline__ u64 bar_poll(u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void bar_after() { }
#else
__device__ __forceinline__ u64 bar_arrive(u64* p, u64 add) { __threadfence(); return atomicAdd(p, add); }
__device__ __forceinline__ u64 bar_poll(u64* p) { return *(volatile u64*)p; }
__device__ __forceinline__ void bar_after() { __threadfence(); }
#endif
// leave = 0: no block leaves on Ctrl-C (out_room: thread 0 polls the flag and tells them all)
__device__ __forceinline__ int gsync_or(Ctx& c, int f, int leave = 1) {
    __shared__ int sflag_;
    f = __syncthreads_or(f);
    if (gridDim.x == 1) { c.dirty = 0; return f; }
    if (threadIdx.x == 0) {
        unsigned int spins = 0; int stop = 0;
#ifdef GEN_BARRIER
        unsigned int* b32 = (unsigned int*)c.bar;
        volatile unsigned int* vb = b32;
        unsigned int g = c.gen, nf;
        __threadfence();
        unsigned int old = atomicAdd(&b32[0], f ? 0x10001u : 1u);
        if ((old & 0xFFFFu) == gridDim.x - 1) {
            nf = (f || (old >> 16)) ? 1u : 0u;
            b32[0] = 0u;
            __threadfence();
            c.gen = ((g & ~1u) + 2u) | nf;
            atomicExch(&b32[1], c.gen);
        } else {
            unsigned int v;
            while ((v = vb[1]) == g) {
                if (leave && ++spins % BAR_POLL_INTR == 0 && intr_flag(c)) { stop = 2; break; }
            }
            c.gen = v;
            nf = v & 1u;
        }
        __threadfence();
        sflag_ = (int)nf | stop;
#else
        c.nb += gridDim.x;
        u64 add = f ? (BAR_COUNT + 2ULL) : 1ULL;
        u64 v = bar_arrive(c.bar, add) + add;
        while ((v & BAR_COUNT) < c.nb && v <= BAR_COUNT) {
            v = bar_poll(c.bar);
            if (leave && ++spins % BAR_POLL_INTR == 0 && intr_flag(c)) { stop = 2; break; }
        }
        bar_after();
        sflag_ = (v > BAR_COUNT ? 1 : 0) | stop;
#endif
    }
    __syncthreads();
    c.dirty = 0;
    int s = sflag_;
    if (s & 2) intr_soon(c);       // left because of Ctrl-C: stop at the next tick
    return s & 1;
}
__device__ __forceinline__ void gsync(Ctx& c) { (void)gsync_or(c, 0); }

// ---------------------------------------------------------------- output while the kernel runs
// The output records are in page-locked host memory, which the host's drain thread reads while
// the kernel runs (jit/cuda_output.py). After each write call thread 0 publishes how far the
// finished calls' records go (h[OUT_PUB] = the buffer's round << 40 | words); the host writes
// them and answers how far it wrote (h[OUT_ACK], the same form). A full buffer waits until the
// host wrote every finished call, moves the unfinished call's records to its start and begins
// the next round. h[OUT_ON] = 0 (no drain: no page-locked memory to be had): a full buffer
// stops the launch for a larger one (E_RERUN), as before. h: the words after the Ctrl-C flag
// (OUT_ON, OUT_PUB, OUT_ACK: prelude.py).
__device__ __forceinline__ volatile i64* out_host(const Ctx& c) { return (volatile i64*)c.intr; }
// after a write call; ``by_all``: some of its records were stored by every thread (a slice, a table)
__device__ __forceinline__ void out_pub(Ctx& c, int by_all) {
    if (!out_host(c)[OUT_ON]) return;
    if (by_all) (void)gsync_or(c, 0, 0);
    c.opub = c.op;
    if (c.gt == 0) {
        __threadfence_system();
        out_host(c)[OUT_PUB] = (c.oround << OUT_ROUND) | c.op;
    }
}
// room for m more words of records (every thread, uniform): 0 made, 1 none (the host launches
// again with a larger buffer: E_RERUN), 2 Ctrl-C while the host had not yet written the records
__device__ int out_room(Ctx& c, i64 m) {
    volatile i64* h = out_host(c);
    i64 keep = c.op - c.opub;             // the unfinished call's records
    if (!h[OUT_ON] || keep + m > c.obcap || keep > c.opub) return 1;
    int stop = 0;
    if (c.gt == 0) {
        i64 want = (c.oround << OUT_ROUND) | c.opub;
        unsigned int spins = 0;
        while (h[OUT_ACK] != want)
            if (++spins % BAR_POLL_INTR == 0 && intr_flag(c)) { stop = 1; break; }
    }
    if (gsync_or(c, stop, 0)) return 2;   // (also: every thread's stores of the records are done)
    for (i64 w = c.gt; w < keep; w += c.G) c.ob[w] = c.ob[c.opub + w];   // keep <= opub: no overlap
    (void)gsync_or(c, 0, 0);
    c.op = keep; c.opub = 0; c.oround += 1;
    if (c.gt == 0) { __threadfence_system(); h[OUT_PUB] = c.oround << OUT_ROUND; }
    return 0;
}

// kind 0: or, 1: add, 2: min
__device__ __forceinline__ u64 warp_red(u64 v, int kind) {
    for (int o = 16; o > 0; o >>= 1) {
        u64 x = __shfl_xor_sync(FULLMASK, v, o);
        v = kind == 0 ? (v | x) : kind == 1 ? (v + x) : (x < v ? x : v);
    }
    return v;
}

// one atomic a block, not one a warp: the warps' values meet in shared memory first (a
// reduction of 2^17 words on 512 blocks took up to 4096 atomics on one word, a STEP loop over
// them ~11 us an iteration on the H200; the switch WARP_ATOMICS brings the old form back)
__device__ __forceinline__ u64 grid_red(Ctx& c, u64 v, int kind) {
    v = warp_red(v, kind);
    int s = c.ri;
    if (c.gt == 0) {      // the next slot of every kind back to its identity (see the module text)
        int t = (s + 1) % 3;
        c.red[t] = 0ULL; c.red[3 + t] = 0ULL; c.red[6 + t] = ALL;
    }
#ifndef WARP_ATOMICS
    __shared__ u64 wred_[32];
    if ((threadIdx.x & 31) == 0) wred_[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        const int nw = (int)((blockDim.x + 31) >> 5);
        v = (int)threadIdx.x < nw ? wred_[threadIdx.x] : (kind == 2 ? ALL : 0ULL);
        v = warp_red(v, kind);
    }
    // (gsync below passes a __syncthreads before any thread can write wred_ again)
    if (threadIdx.x == 0) {
#else
    if ((threadIdx.x & 31) == 0) {
#endif
        if (kind == 0) { if (v) atomicOr(&c.red[s], v); }
        else if (kind == 1) { if (v) atomicAdd(&c.red[3 + s], v); }
        else { if (v != ALL) atomicMin(&c.red[6 + s], v); }
    }
    gsync(c);
    u64 r = __ldcg(&c.red[kind * 3 + s]);
    c.ri = (s + 1) % 3;
    return r;
}

// inside parallel for an iteration runs on a group of LANES lanes (32: a warp; 16: two
// iterations a warp at once), its control flow uniform in the group only: its shuffles name
// the group's lanes alone
__device__ __forceinline__ unsigned int gmask() {
    return LANES == 32 ? FULLMASK : (((1u << (LANES & 31)) - 1u) << ((threadIdx.x & 31) & ~(LANES - 1)));
}
__device__ __forceinline__ u64 group_red(u64 v, int kind) {
    for (int o = LANES / 2; o > 0; o >>= 1) {
        u64 x = __shfl_xor_sync(gmask(), v, o, LANES);
        v = kind == 0 ? (v | x) : kind == 1 ? (v + x) : (x < v ? x : v);
    }
    return v;
}
template <bool GRID> __device__ __forceinline__ u64 red(Ctx& c, u64 v, int kind) {
    if (GRID) return grid_red(c, v, kind);
    return group_red(v, kind);
}

// ---------------------------------------------------------------- distributed vectors (b: first word, s: stride)
template <int N> __device__ __forceinline__ void d_set(V<N>& x, i64 b, i64 s) {
    i64 nw = nwords(x.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; x.w[r] = w < nw - 1 ? ALL : (w == nw - 1 ? tailm(x.n) : 0ULL); }
}
template <int N> __device__ __forceinline__ void d_clr(V<N>& x) {
#pragma unroll
    for (int r = 0; r < N; ++r) x.w[r] = 0ULL;
}
template <int N> __device__ __forceinline__ void d_not(V<N>& o, const V<N>& a, i64 b, i64 s) {
    i64 nw = nwords(a.n); u64 m = tailm(a.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; o.w[r] = w < nw ? (~a.w[r] & (w == nw - 1 ? m : ALL)) : 0ULL; }
    o.n = a.n;
}
template <int N> __device__ __forceinline__ void d_logic(V<N>& o, const V<N>& a, const V<N>& y, int kind) {
#pragma unroll
    for (int r = 0; r < N; ++r) o.w[r] = kind == 0 ? (a.w[r] & y.w[r]) : kind == 1 ? (a.w[r] | y.w[r]) : (a.w[r] ^ y.w[r]);
    o.n = a.n;
}
template <int N> __device__ __forceinline__ void d_col_get(V<N>& o, const Tb& t, i64 i, i64 b, i64 s) {
    const u64* col = t.d + (i - 1) * t.W;
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; o.w[r] = w < t.W ? ldt(col + w) : 0ULL; }
    o.n = t.n;
}
template <int N> __device__ __forceinline__ void d_col_set(const Tb& t, i64 i, const V<N>& v, i64 b, i64 s) {
    u64* col = t.d + (i - 1) * t.W;
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; if (w < t.W) col[w] = v.w[r]; }
}
// COL(i, T) := v inside parallel for, storing only the words that differ from ``was`` (what
// the column holds: see parallel_for.py: skip_unchanged_stores)
template <int N> __device__ __forceinline__ void d_col_set_changed(const Tb& t, i64 i, const V<N>& v, const V<N>& was,
                                                                   i64 b, i64 s) {
    u64* col = t.d + (i - 1) * t.W;
#pragma unroll
    for (int r = 0; r < N; ++r) {
        i64 w = b + r * s;
#ifdef STORE_ALL
        if (w < t.W) col[w] = v.w[r];
#else
        if (w < t.W && v.w[r] != was.w[r]) col[w] = v.w[r];
#endif
    }
}
template <int N> __device__ __forceinline__ void d_load(V<N>& o, const u64* src, i64 n, i64 b, i64 s) {
    i64 nw = nwords(n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; o.w[r] = w < nw ? __ldcg(src + w) : 0ULL; }
    o.n = n;
}
template <int N> __device__ __forceinline__ void d_store(u64* dst, const V<N>& v, i64 b, i64 s) {
    i64 nw = nwords(v.n);
#pragma unroll
    for (int r = 0; r < N; ++r) { i64 w = b + r * s; if (w < nw) dst[w] = v.w[r]; }
}
// a warp's copy (lane l: words l + 32 r) of a vector every warp reads (the columns a parallel
// for reads in every iteration): the block loads it into shared memory once, the warps take it
// from there (each of a grid's warps reading the same few words from L2 after a barrier is a
// hot spot); called where every thread of the block is
template <int N> __device__ __forceinline__ void d_load_block(V<N>& o, const u64* src, i64 n, i64 ln, i64 s) {
#ifdef WARP_LOADS
    d_load(o, src, n, ln, s);
#else
    __shared__ u64 sh_[N * 32];
    i64 nw = nwords(n);
    __syncthreads();                  // an earlier call's readers are done with sh_
    for (int w = threadIdx.x; w < N * 32; w += blockDim.x) sh_[w] = w < nw ? __ldcg(src + w) : 0ULL;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < N; ++r) o.w[r] = sh_[ln + r * s];
    o.n = n;
#endif
}
template <int N, bool GRID> __device__ __forceinline__ bool d_some(Ctx& c, const V<N>& x) {
    u64 a = 0ULL;
#pragma unroll
    for (int r = 0; r < N; ++r) a |= x.w[r];
    return red<GRID>(c, a != 0ULL ? 1ULL : 0ULL, 0) != 0ULL;
}
template <int N, bool GRID> __device__ __forceinline__ i64 d_numb(Ctx& c, const V<N>& x) {
    u64 a = 0ULL;
#pragma unroll
    for (int r = 0; r < N; ++r) a += __popcll(x.w[r]);
    return (i64)red<GRID>(c, a, 1);
}
// the 1-based position of the first 1, 0 if none
template <int N, bool GRID> __device__ __forceinline__ i64 d_fnd(Ctx& c, const V<N>& x, i64 b, i64 s) {
    u64 best = ALL;
#pragma unroll
    for (int r = 0; r < N; ++r) {
        if (x.w[r] != 0ULL && best == ALL) best = (u64)((b + r * s) * 64 + __ffsll((long long)x.w[r]));
    }
    u64 p = red<GRID>(c, best, 2);
    return p == ALL ? 0 : (i64)p;
}
// A counted loop reading COL(j, T) of a table it does not write (statements.py: columns_ahead)
// loads the columns of PFD iterations at once, j, j + d, ..., those inside the loop's range and
// the table (the others are not read: the body's check fails first), so that their loads
// overlap: MATCH's 19 columns waited for 19 loads one after another. Only where a thread holds
// few words (R < 8): PFD * R words a table stay in registers.
#ifdef NO_AHEAD
#define PFD 1
#endif
#ifndef PFD
#define PFD (R >= 8 ? 1 : 8 / R)
#endif
#ifdef NO_SCAN
#define SCAN_OK 0
#else
#define SCAN_OK 1
#endif
#ifdef ROW_SYNC
#define ROW_SYNC_ 1
#else
#define ROW_SYNC_ 0
#endif
template <int D, int N> __device__ __forceinline__ void cols_ahead(u64 (&a)[D][N], const Tb& t, i64 j, i64 hi,
                                                                   int d, i64 b, i64 s) {
#pragma unroll
    for (int u = 0; u < D; ++u) {
        const i64 c = j + (i64)u * d;
        if ((d > 0 ? c <= hi : c >= hi) && 0 < c && c <= t.k) {
            const u64* col = t.d + (c - 1) * t.W;
#pragma unroll
            for (int q = 0; q < N; ++q) { const i64 w = b + (i64)q * s; a[u][q] = w < t.W ? ldt(col + w) : 0ULL; }
        }
    }
}
// word q of the column loaded at phase ph: a chain of selects, so the buffer stays in registers
template <int D, int N> __device__ __forceinline__ u64 ahead_word(const u64 (&a)[D][N], int ph, int q) {
    u64 v = a[0][q];
#pragma unroll
    for (int u = 1; u < D; ++u) if (u == ph) v = a[u][q];
    return v;
}

// `while SOME(X) do begin i := STEP(X); ...` where the body leaves X alone (statements.py:
// some_step): X's words are staged once in a scratch region and every thread walks them
// itself, from the 1 it took last (cw: its word, cv: that word's 1s not taken yet), a warp
// looking 32 words ahead at once; so an iteration takes no grid reduction. The 1-based
// position of the next 1, 0 if none (then cv stays 0).
__device__ __forceinline__ i64 scan_next(const u64* s, i64 nw, i64& cw, u64& cv) {
    const int lane = threadIdx.x & 31;
    while (cv == 0ULL) {
        if (cw + 1 >= nw) return 0;
        const i64 w = cw + 1 + lane;
        const u64 v = w < nw ? __ldcg(s + w) : 0ULL;
        const unsigned int m = __ballot_sync(FULLMASK, v != 0ULL);
        if (m == 0u) { cw += 32; continue; }
        const int l = __ffsll((long long)m) - 1;
        cw += 1 + l;
        cv = __shfl_sync(FULLMASK, v, l);
    }
    const i64 p = cw * 64 + __ffsll((long long)cv);
    cv &= cv - 1ULL;
    return p;
}
template <int N> __device__ __forceinline__ void d_clear_bit(V<N>& x, i64 p, i64 b, i64 s) {
    if (p <= 0) return;
    i64 wi = (p - 1) >> 6;
#pragma unroll
    for (int r = 0; r < N; ++r) if (b + r * s == wi) x.w[r] &= ~(1ULL << ((p - 1) & 63));
}
template <int N> __device__ __forceinline__ void d_only_bit(V<N>& o, const V<N>& x, i64 p, i64 b, i64 s) {
    i64 wi = p > 0 ? (p - 1) >> 6 : -1;
#pragma unroll
    for (int r = 0; r < N; ++r) o.w[r] = (b + r * s == wi) ? (1ULL << ((p - 1) & 63)) : 0ULL;
    o.n = x.n;
}
template <int N, bool GRID> __device__ __forceinline__ u64 d_word_at(Ctx& c, const V<N>& x, i64 wi, i64 b, i64 s) {
    u64 v = 0ULL;
    if (!GRID) {       // a group's slice: word wi is lane wi % LANES's word wi / LANES (one shuffle)
#pragma unroll
        for (int r = 0; r < N; ++r) if (r == wi / LANES) v = x.w[r];
        return __shfl_sync(gmask(), v, (int)(wi % LANES), LANES);
    }
#pragma unroll
    for (int r = 0; r < N; ++r) if (b + r * s == wi) v = x.w[r];
    return red<GRID>(c, v, 0);
}
template <int N> __device__ __forceinline__ void d_put_bit(V<N>& x, i64 i, i64 bit, i64 b, i64 s) {
    i64 wi = (i - 1) >> 6; u64 m = 1ULL << ((i - 1) & 63);
#pragma unroll
    for (int r = 0; r < N; ++r) if (b + r * s == wi) x.w[r] = bit ? (x.w[r] | m) : (x.w[r] & ~m);
}
// compare (bit 1 most significant): -1, 0, 1; one reduction of (first differing bit, a's bit there)
template <int N, bool GRID> __device__ __forceinline__ int d_cmp(Ctx& c, const V<N>& a, const V<N>& y, i64 b, i64 s) {
    u64 best = ALL;
#pragma unroll
    for (int r = 0; r < N; ++r) {
        u64 d = a.w[r] ^ y.w[r];
        if (d != 0ULL && best == ALL) {
            int z = __ffsll((long long)d) - 1;
            best = ((u64)((b + r * s) * 64 + z) << 1) | ((a.w[r] >> z) & 1ULL);
        }
    }
    u64 p = red<GRID>(c, best, 2);
    if (p == ALL) return 0;
    return (p & 1ULL) ? 1 : -1;
}

// ---------------------------------------------------------------- replicated words (every thread all words)
template <int N> __device__ __forceinline__ void r_set(V<N>& x) {
    i64 nw = nwords(x.n);
    for (int t = 0; t < N; ++t) x.w[t] = t < nw - 1 ? ALL : (t == nw - 1 ? tailm(x.n) : 0ULL);
}
template <int N> __device__ __forceinline__ void r_not(V<N>& o, const V<N>& a) {
    i64 nw = nwords(a.n); u64 m = tailm(a.n);
    for (int t = 0; t < N; ++t) o.w[t] = t < nw ? (~a.w[t] & (t == nw - 1 ? m : ALL)) : 0ULL;
    o.n = a.n;
}
template <int N> __device__ __forceinline__ i64 r_fnd(const V<N>& x, i64 from) {
    i64 nw = nwords(x.n);
    for (i64 t = from; t < nw; ++t) if (x.w[t]) return t * 64 + __ffsll((long long)x.w[t]);
    return 0;
}
template <int N> __device__ __forceinline__ i64 r_numb(const V<N>& x) {
    i64 s = 0, nw = nwords(x.n);
    for (i64 t = 0; t < nw; ++t) s += __popcll(x.w[t]);
    return s;
}
template <int N> __device__ __forceinline__ bool r_some(const V<N>& x) {
    i64 nw = nwords(x.n);
    for (i64 t = 0; t < nw; ++t) if (x.w[t]) return true;
    return false;
}
// a word's bit at a position known only at run time: for words of a few 64-bit words a chain
// of selects (the word stays in registers; indexed, the compiler puts it in local memory)
#define SELECT_WORDS 4
template <int N> __device__ __forceinline__ i64 r_bit(const V<N>& x, i64 p) {   // 0-based
    if (N > SELECT_WORDS) return (i64)((x.w[p >> 6] >> (p & 63)) & 1ULL);
    const i64 q = p >> 6;
    u64 v = x.w[0];
#pragma unroll
    for (int t = 1; t < (N <= SELECT_WORDS ? N : 1); ++t) if (t == q) v = x.w[t];
    return (i64)((v >> (p & 63)) & 1ULL);
}
template <int N> __device__ __forceinline__ void r_put(V<N>& x, i64 p, i64 bit) {
    u64 m = 1ULL << (p & 63);
    if (N > SELECT_WORDS) {
        if (bit) x.w[p >> 6] |= m; else x.w[p >> 6] &= ~m;
        return;
    }
    const i64 q = p >> 6;
#pragma unroll
    for (int t = 0; t < (N <= SELECT_WORDS ? N : 1); ++t) if (t == q) x.w[t] = bit ? (x.w[t] | m) : (x.w[t] & ~m);
}
template <int N> __device__ __forceinline__ void r_trim(V<N>& o, const V<N>& w, i64 i, i64 j) {
    i64 m = j - i + 1;
    for (int t = 0; t < N; ++t) o.w[t] = 0ULL;
    for (i64 p = 0; p < m; ++p) if (r_bit(w, i - 1 + p)) o.w[p >> 6] |= 1ULL << (p & 63);
    o.n = m;
}
template <int N> __device__ __forceinline__ int r_cmp(const V<N>& a, const V<N>& y) {
    i64 nw = nwords(a.n);
    for (i64 t = 0; t < nw; ++t) {
        u64 d = a.w[t] ^ y.w[t];
        if (d) { u64 low = d & (~d + 1ULL); return (a.w[t] & low) ? 1 : -1; }
    }
    return 0;
}
template <int N> __device__ __forceinline__ void r_arith(V<N>& o, const V<N>& a, const V<N>& y, bool sub) {
    V<N> out;
    for (int t = 0; t < N; ++t) out.w[t] = 0ULL;
    u64 carry = 0ULL;
    for (i64 p = a.n - 1; p >= 0; --p) {
        u64 x = (u64)r_bit(a, p), z = (u64)r_bit(y, p);
        u64 s = x ^ z ^ carry;
        carry = sub ? ((~x & (z | carry)) | (z & carry)) & 1ULL : (x & z) | (carry & (x ^ z));
        if (s) out.w[p >> 6] |= 1ULL << (p & 63);
    }
    out.n = a.n;
    o = out;
}
template <int N> __device__ __forceinline__ void r_row_get(V<N>& o, const Tb& t, i64 i) {
    for (int q = 0; q < N; ++q) o.w[q] = 0ULL;
    i64 w = (i - 1) >> 6; int sh = (int)((i - 1) & 63);
    for (i64 c = 0; c < t.k; ++c) o.w[c >> 6] |= ((ldt(t.d + c * t.W + w) >> sh) & 1ULL) << (c & 63);
    o.n = t.k;
}
// ROW(i, T) in the grid's uniform code: each block's warps read 32 columns at a time (one
// word each, independent loads) and ballot their bits into shared memory, then every thread
// takes the words (was: every thread reading all k columns one after another)
template <int N> __device__ __forceinline__ void r_row_get_grid(V<N>& o, const Tb& t, i64 i) {
    __shared__ unsigned int rb_[2 * N];
    i64 w = (i - 1) >> 6; int sh = (int)((i - 1) & 63);
    int lane = threadIdx.x & 31;
    i64 chunks = (t.k + 31) >> 5;
    __syncthreads();                  // an earlier call's readers are done with rb_
    for (i64 ch = threadIdx.x >> 5; ch < chunks; ch += blockDim.x >> 5) {
        i64 c = ch * 32 + lane;
        unsigned int bit = c < t.k ? (unsigned int)((ldt(t.d + c * t.W + w) >> sh) & 1ULL) : 0u;
        unsigned int m = __ballot_sync(FULLMASK, bit);
        if (lane == 0) rb_[ch] = m;
    }
    __syncthreads();
    for (int q = 0; q < N; ++q) {
        u64 lo = 2 * q < chunks ? (u64)rb_[2 * q] : 0ULL, hi = 2 * q + 1 < chunks ? (u64)rb_[2 * q + 1] : 0ULL;
        o.w[q] = lo | (hi << 32);
    }
    o.n = t.k;
}
// the owner of word (i-1)>>6 of every column writes it
template <int N> __device__ __forceinline__ void r_row_set(const Tb& t, i64 i, const V<N>& v, i64 b, i64 s) {
    i64 w = (i - 1) >> 6;
    if ((w - b) % s != 0 || w < b) return;
    int sh = (int)((i - 1) & 63); u64 m = ~(1ULL << sh);
    for (i64 c = 0; c < t.k; ++c) {
        u64* p = t.d + c * t.W + w;
        *p = (ldt(p) & m) | (((v.w[c >> 6] >> (c & 63)) & 1ULL) << sh);
    }
}

