
extern "C" __global__ void first_one(const unsigned long long* v, long long nwords,
                                      unsigned long long* pos) {
    // pos[0] := min over words of (64 * word + index of its lowest 1); untouched if all 0
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < nwords) {
        unsigned long long x = v[w];
        if (x) atomicMin(pos, (unsigned long long)(w * 64 + __ffsll((long long)x) - 1));
    }
}
extern "C" __global__ void clear_bit(const unsigned long long* v, long long nwords,
                                     const unsigned long long* pos, unsigned long long* out) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < nwords) {
        unsigned long long p = pos[0], x = v[w];
        if ((long long)(p >> 6) == w) x &= ~(1ULL << (p & 63));
        out[w] = x;
    }
}
extern "C" __global__ void only_bit(long long nwords, const unsigned long long* pos,
                                    unsigned long long* out) {
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < nwords) {
        unsigned long long p = pos[0];
        out[w] = ((long long)(p >> 6) == w) ? (1ULL << (p & 63)) : 0ULL;
    }
}
extern "C" __global__ void copy_set_bit(const unsigned long long* v, long long nwords, long long pos,
                                        int b, unsigned long long* out) {
    // out := v with bit pos set to b (one launch instead of a copy and an indexed update)
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (w < nwords) {
        unsigned long long x = v[w];
        if (w == (pos >> 6)) {
            unsigned long long m = 1ULL << (pos & 63);
            x = b ? (x | m) : (x & ~m);
        }
        out[w] = x;
    }
}
extern "C" __global__ void row_gather(const unsigned long long* t, long long k, long long nwords,
                                      long long row, unsigned long long* out) {
    // out word w packs bit `row` of columns 64w .. 64w+63
    long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long outwords = (k + 63) / 64;
    if (w >= outwords) return;
    long long rw = row >> 6; unsigned int rb = row & 63;
    unsigned long long acc = 0;
    long long c0 = w * 64;
    for (int j = 0; j < 64 && c0 + j < k; ++j)
        acc |= ((t[(c0 + j) * nwords + rw] >> rb) & 1ULL) << j;
    out[w] = acc;
}
extern "C" __global__ void row_scatter(unsigned long long* t, long long k, long long nwords,
                                       long long row, const unsigned long long* v) {
    long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= k) return;
    long long rw = row >> 6; unsigned int rb = row & 63;
    unsigned long long bit = (v[c >> 6] >> (c & 63)) & 1ULL;
    unsigned long long* p = t + c * nwords + rw;
    *p = (*p & ~(1ULL << rb)) | (bit << rb);
}
