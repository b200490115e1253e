// The CUDA that the GPU tier's generated kernels use, on the CPU (tests/gpu_sources/emulate.py): every
// GPU thread an OS thread, block barriers as std::barrier, warp shuffles and ballots through
// per-warp exchange slots, atomics as std::atomic_ref, __ldcg as a relaxed atomic load. It
// runs a kernel's logic (barriers, the pivot loop's buffers, failures) without a GPU; it says
// nothing about the GPU's memory model or speed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <thread>
#include <barrier>
#include <vector>
#include <map>
#include <mutex>
#include <memory>
struct dim3e { unsigned x = 0, y = 0, z = 0; };
thread_local dim3e threadIdx, blockIdx;
dim3e gridDim, blockDim;
struct BlockEmu {
    std::unique_ptr<std::barrier<>> bar;
    std::vector<std::unique_ptr<std::barrier<>>> wbar;
    std::map<long, std::unique_ptr<struct LanesEmu>> lanes;   // (warp, lane mask) -> its exchange
    std::vector<unsigned long long> xch;       // [warp][slot][lane]
    std::atomic<int> oracc[3];
    std::map<long, std::vector<char>> shm;
    std::mutex mu;
};
thread_local BlockEmu* tb_;
thread_local long nsync_ = 0, nshfl_ = 0;
#define __global__
#define __launch_bounds__(...)
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define FULLMASK_EMU 0xFFFFFFFFu
template <class T> T* emu_shm(long count, long key) {
    std::lock_guard<std::mutex> g(tb_->mu);
    auto& v = tb_->shm[key * 1000003L + count];
    if (v.empty()) v.assign(sizeof(T) * count, 0);
    return reinterpret_cast<T*>(v.data());
}
inline void __syncthreads() { tb_->bar->arrive_and_wait(); }
inline int __syncthreads_or(int p) {
    long c = nsync_++;
    if (threadIdx.x == 0) tb_->oracc[(c + 1) % 3].store(0);
    if (p) tb_->oracc[c % 3].fetch_or(1);
    tb_->bar->arrive_and_wait();
    return tb_->oracc[c % 3].load();
}
inline int __syncthreads_and(int p) { return !__syncthreads_or(!p); }
// the lanes of ``mask`` in this thread's warp (a whole warp, or a group of parallel for's
// lanes that runs on without the others): their barrier and their own exchange slots, so a
// group that shuffled more than the rest of its warp does not read another's slots
struct LanesEmu { std::unique_ptr<std::barrier<>> bar; unsigned long long xch[2 * 32]; };
thread_local std::map<long, long> nxchg_;       // exchanges this thread made, by (warp, mask)
inline LanesEmu* lanes_(unsigned mask) {
    long key = ((long)(threadIdx.x >> 5) << 32) | mask;
    std::lock_guard<std::mutex> g(tb_->mu);
    auto& e = tb_->lanes[key];
    if (!e) { e = std::make_unique<LanesEmu>(); e->bar = std::make_unique<std::barrier<>>(__builtin_popcount(mask)); }
    return e.get();
}
inline unsigned long long xchg_(unsigned mask, unsigned long long v, int src) {
    int l = threadIdx.x & 31;
    LanesEmu* e = lanes_(mask);
    long c = nxchg_[((long)(threadIdx.x >> 5) << 32) | mask]++ & 1;
    e->xch[c * 32 + l] = v;
    e->bar->arrive_and_wait();
    return e->xch[c * 32 + (src & 31)];
}
template <class T> T __shfl_sync(unsigned m, T v, int src, int width = 32) {
    int l = threadIdx.x & 31;
    return (T)xchg_(m, (unsigned long long)v, (l & ~(width - 1)) + (src & (width - 1)));
}
template <class T> T __shfl_xor_sync(unsigned m, T v, int o, int width = 32) {
    int l = threadIdx.x & 31, t = l ^ o;
    return (T)xchg_(m, (unsigned long long)v, (t & ~(width - 1)) == (l & ~(width - 1)) ? t : l);
}
inline unsigned __ballot_sync(unsigned, int p) {
    int w = threadIdx.x >> 5, l = threadIdx.x & 31;
    long c = nshfl_++ & 1;
    unsigned long long* s = &tb_->xch[((size_t)w * 2 + c) * 32];
    s[l] = p ? 1 : 0;
    tb_->wbar[w]->arrive_and_wait();
    unsigned m = 0;
    for (int i = 0; i < 32; ++i) if (s[i]) m |= 1u << i;
    return m;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
// a rank kernel's thread waiting for the host's answer in the mailbox (ranks.cu): more threads than cores
#define RK_SPIN() std::this_thread::yield()
// a rank kernel's RK_RANK, RK_SIZE, RK_ALIGN (#defines of its GPU instance) read at run time from
// STARVM_EMU_RK ("rank,size,align"): one CPU build serves every rank (emulate._cpp)
inline long long emu_rk(int i) {
    static const std::vector<long long> v = [] {
        std::vector<long long> out(3, 0);
        const char* s = std::getenv("STARVM_EMU_RK");
        if (s) std::sscanf(s, "%lld,%lld,%lld", &out[0], &out[1], &out[2]);
        return out;
    }();
    return v[i];
}
template <class T> T __ldcg(const T* p) { return std::atomic_ref<T>(*const_cast<T*>(p)).load(std::memory_order_relaxed); }
template <class T, class U> T atomicAdd(T* p, U v) { return std::atomic_ref<T>(*p).fetch_add((T)v); }
template <class T, class U> T atomicOr(T* p, U v) { return std::atomic_ref<T>(*p).fetch_or((T)v); }
template <class T, class U> T atomicExch(T* p, U v) { return std::atomic_ref<T>(*p).exchange((T)v); }
template <class T, class U> T atomicAnd(T* p, U v) { return std::atomic_ref<T>(*p).fetch_and((T)v); }
template <class T, class U> T atomicMin(T* p, U v) {
    std::atomic_ref<T> a(*p); T o = a.load();
    while ((T)v < o && !a.compare_exchange_weak(o, (T)v)) {}
    return o;
}
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
template <class F> void launch(unsigned blocks, unsigned threads, F body) {
    gridDim.x = blocks; blockDim.x = threads;
    std::vector<std::unique_ptr<BlockEmu>> bs;
    for (unsigned b = 0; b < blocks; ++b) {
        auto e = std::make_unique<BlockEmu>();
        e->bar = std::make_unique<std::barrier<>>(threads);
        for (unsigned w = 0; w < threads / 32; ++w) e->wbar.push_back(std::make_unique<std::barrier<>>(32));
        e->xch.assign((size_t)threads / 32 * 2 * 32, 0);
        for (auto& o : e->oracc) o.store(0);
        bs.push_back(std::move(e));
    }
    std::vector<std::thread> ts;
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < threads; ++t)
            ts.emplace_back([&, b, t] { blockIdx.x = b; threadIdx.x = t; tb_ = bs[b].get(); body(); });
    for (auto& t : ts) t.join();
}
