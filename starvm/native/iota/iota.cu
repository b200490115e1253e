// IOTA (stdlib/rows.star) on the GPU; helpers: native/shared/rows.cuh.
// Thread (x: word w, y: column c): T's column c, word w, holds bit b = k-1-c of the row numbers
// w*64 + t + 1 (t = 0..63), in closed form: below bit 6 the word is the same for every w (t + 1 <= 64
// never reaches bit 6 of w*64 except at t = 63, where bits 0..5 of 64 are 0); from bit 6 on, rows
// t < 63 hold bit b-6 of w and row t = 63 (the row number (w+1)*64) bit b-6 of w+1.
__constant__ u64 IOTA_LOW[6] = {0x5555555555555555ULL, 0x6666666666666666ULL, 0x7878787878787878ULL,
                                0x7F807F807F807F80ULL, 0x7FFF80007FFF8000ULL, 0x7FFFFFFF80000000ULL};
extern "C" __global__ void rows_iota(u64* T, int k, i64 W, i64 n) {
    const i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= W) return;
    const i64 left = n - w * 64;                       // rows of this word that exist
    const u64 live = left >= 64 ? ~0ULL : ((1ULL << left) - 1ULL);
    for (int c = blockIdx.y; c < k; c += gridDim.y) {
        const int b = k - 1 - c;
        u64 out = 0ULL;
        if (b < 6)
            out = IOTA_LOW[b];
        else if (b < 64)
            out = ((((u64)w >> (b - 6)) & 1ULL) ? 0x7FFFFFFFFFFFFFFFULL : 0ULL)
                | ((((u64)(w + 1) >> (b - 6)) & 1ULL) << 63);
        T[(i64)c * W + w] = out & live;
    }
}
