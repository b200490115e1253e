typedef unsigned long long u64;
typedef long long i64;
