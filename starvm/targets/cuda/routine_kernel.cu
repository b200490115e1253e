extern "C" __global__ void KBOUNDS $name($args) {
    Ctx c_;
    i64* st = io; i64* cnt = io + STATUS_SIZE; i64* res = io + STATUS_SIZE + NKINDS;
    u64* bar = (u64*)(io + STATUS_SIZE + NKINDS + $nout); u64* red = bar + 1;
    c_.st = st; c_.cnt = cnt; c_.ob = ob; c_.obcap = obcap; c_.red = red; c_.bar = bar; c_.scr = scr;
    c_.caps = caps; c_.gt = (i64)blockIdx.x * blockDim.x + threadIdx.x; c_.G = (i64)gridDim.x * blockDim.x;
    c_.left = left; c_.op = 0; c_.opub = 0; c_.oround = 0; c_.sp = 0; c_.failed = 0; c_.ri = 0; c_.gen = 0u; c_.nb = 0ULL; c_.intr = intr; c_.dirty = 0;
#pragma unroll
    for (int k_ = 0; k_ < NKINDS; ++k_) { c_.cn[k_] = 0; c_.wn[k_] = 0; }
$unpack    f_$root($call);
    if ((threadIdx.x & (LANES - 1)) == 0) {     // each group's parallel-for steps, once per call
#pragma unroll
        for (int k_ = 0; k_ < NKINDS; ++k_) if (c_.wn[k_]) atomicAdd((u64*)&cnt[k_], (u64)c_.wn[k_]);
    }
    if (c_.gt == 0) {
#pragma unroll
        for (int k_ = 0; k_ < NKINDS; ++k_) if (c_.cn[k_]) atomicAdd((u64*)&cnt[k_], (u64)c_.cn[k_]);
        st[S_LEFT] = c_.left; st[S_OUT] = c_.op;
    }
    if (c_.failed) return;
$results}
