extern "C" __global__ void star_forall($params) {
    __shared__ unsigned long long sh_word, sh_count;
    unsigned long long lc[$nkinds] = {0};
    long long v_loop = start $step (long long)blockIdx.x;
$body
done:
    if (threadIdx.x == 0) {
$flush
    }
}
