"""One launch of each reference kernel at the sizes that miss their goal (after two warm-ups), between
cudaProfilerStart and Stop, for Nsight Compute: p27 at V = 32000 and 128256 (bf16, M = 8192), p25 at
H = 8462 and 16384 (fp32 and bf16, M = 4096), plus the copy of the same bytes (checker/bench/ceiling.py)
after each, so that the profile shows each kernel's DRAM traffic and bandwidth next to the copy's. On a GPU:

    ROOT=../.. ncu --profile-from-start off --kernel-name regex:'ce_|ln_|copy_words' \
        --metrics "$(python -c 'import ncu_profile; print(ncu_profile.PROFILE_METRICS)')" \
        --csv --page raw python ncu_profile.py > ncu_profile.csv

(PROFILE_METRICS: DRAM bytes and throughput, L2 hit rate, occupancy, registers, local-memory spills.)
The split design of p25 (kernels_ln.py's C, K = 4) is profiled beside the reference at fp32 H = 16384."""
import torch

import common  # noqa: F401  (puts ROOT and this folder on sys.path)
import kernels_ce as KC
import kernels_ln as KL
from checker.bench import ceiling

PROFILE_METRICS = ("gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,"
                   "dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,"
                   "sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,"
                   "launch__grid_size,launch__block_size,"
                   "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum")
# (puzzle, size, dtype): the sizes, in the order they are launched
SIZES = [("p27", dict(M=8192, V=32000), "bfloat16"), ("p27", dict(M=8192, V=128256), "bfloat16"),
         ("p25", dict(M=4096, H=8462), "float32"), ("p25", dict(M=4096, H=16384), "float32"),
         ("p25", dict(M=4096, H=8462), "bfloat16"), ("p25", dict(M=4096, H=16384), "bfloat16")]


def work(puzzle, size, dtype):
    """The reference's launch at this size and the copy of its bytes, as two callables."""
    dt = getattr(torch, dtype)
    if puzzle == "p27":
        M, V = size["M"], size["V"]
        logits = torch.randn(M, V, device="cuda", dtype=dt)
        target = torch.randint(0, V, (M,), device="cuda", dtype=torch.int32)
        dloss = torch.ones(1, device="cuda")
        run = lambda: KC.launch_ref(logits, target, dloss)  # noqa: E731
        traffic = 2 * M * V * logits.element_size()
    else:
        M, H = size["M"], size["H"]
        x, dz = (torch.randn(M, H, device="cuda", dtype=dt) for _ in range(2))
        gamma = torch.randn(H, device="cuda", dtype=dt)
        run = lambda: KL.launch_ref(x, gamma, dz)  # noqa: E731
        traffic = 3 * M * H * x.element_size()
    src = torch.empty(traffic // 8, dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    return run, lambda: ceiling.launch(src, dst)


def split_16384():
    """p25's best design at fp32 H = 16384 in explore.py's run: the row over 4 programs, 4 warps, 4 a SM."""
    x, dz = (torch.randn(4096, 16384, device="cuda") for _ in range(2))
    gamma = torch.randn(16384, device="cuda")
    return lambda: KL.launch_split(x, gamma, dz, K=4, warps=4, per_sm=4)


if __name__ == "__main__":
    jobs = [work(*s) for s in SIZES] + [(split_16384(), lambda: None)]
    for run, copy in jobs:
        for _ in range(2):
            run()
            copy()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for run, copy in jobs:
        run()
        copy()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print("profiled", len(jobs), "sizes")
