// What the search kernels share (MATCH: match/match.cu; MIN and MAX: min/extreme.cu): C++
// templates specialised on the columns K, compiled per K with name expressions.
typedef unsigned long long u64;

// A coherent read of a word other blocks update atomically (served by L2, not L1).
__device__ __forceinline__ u64 load_relaxed(const u64* p) {
#if __CUDA_ARCH__ >= 700
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return *(volatile const u64*)p;
#endif
}

// Launch shape: a block of BLOCK threads covers BLOCK * WPT consecutive words; thread t takes
// words w0 + t + i * BLOCK (i < WPT), coalesced across the warp. Columns are loaded in
// batches of B (B = 0: all K at once, no early exit). Bits past row n are 0 in T and X.
template <int K, int B>
struct Batch {
    static const int size = (B <= 0 || B > K) ? K : B;
    static const int count = (K + size - 1) / size;
};
