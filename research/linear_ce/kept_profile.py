"""Why the filter's products were slower per tile than the solution's: Nsight Compute on both, over
the same tiles. One step of the recomputing design at p28's large size (N=8192, H=4096, V=128256,
C = V_C = 4096) on the benchmark's inputs, where the filter keeps every tile, so that
kept_matmul_kernel (the kept lists) and the solution's chunk_matmul_kernel multiply the same blocks.
The first launches of each step's products are profiled (dW's and dx's, slice by slice), after two
warm-up steps: STEP=plain (no filter), STEP=loads (the filter, each step loading its list entry)
or STEP=registers (the filter, the list in registers). On a GPU, from this folder:

    export ROOT=../..
    for STEP in plain loads registers; do STEP=$STEP ncu --profile-from-start off \\
        --kernel-name regex:matmul --launch-count 8 --section SpeedOfLight --section WarpStateStats \\
        --section LaunchStats --metrics "$(python kept_profile.py --metrics)" --page raw --csv \\
        python kept_profile.py > ncu_$STEP.csv; done
    python kept_profile.py --to-json ncu_plain.csv ncu_loads.csv ncu_registers.csv > p28_kept_ncu.json

(the JSON is book/data/p28_kept_ncu.json, shown on p28's page)."""
import json
import os
import sys

sys.path.insert(0, os.environ.get("ROOT", "."))
from research.runs import ncu_launches, ncu_number, ncu_stalls, run_stamp  # noqa: E402

# each launch's record: its key, then ncu's metric
METRICS = {"us": "gpu__time_duration.sum", "instructions": "smsp__inst_executed.sum",
           "tensor_pct": "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
           "registers": "launch__registers_per_thread", "local_load": "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
           "local_store": "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", "dram_read": "dram__bytes_read.sum",
           "dram_write": "dram__bytes_write.sum"}
# those the sections asked for (SpeedOfLight, LaunchStats) do not give
EXTRA_METRICS = ",".join(m for key, m in METRICS.items() if key not in ("us", "registers"))


def profile_step():
    """Two warm-up steps, then one step between cudaProfilerStart and Stop (STEP: see above)."""
    import torch
    import triton
    from recompute import FILTER_EPS, SPEC, benchmark_inputs, launch
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    torch.manual_seed(0)
    N, H, V = 8192, 4096, 128256
    x, w, target = benchmark_inputs(N, H, V)
    dloss, loss = torch.ones(1, device="cuda"), torch.empty(1, device="cuda")
    dx, dw = torch.empty_like(x), torch.empty(V, H, device="cuda", dtype=torch.float32)
    how = os.environ["STEP"]
    eps = None if how == "plain" else FILTER_EPS
    step = lambda: launch(x, w, target, dloss, loss, dx, dw, 4096, 4096, filter_eps=eps,  # noqa: E731
                          list_in_registers=how == "registers", **SPEC.BIG)
    step()
    step()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    step()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def launches(path: str) -> list:
    """ncu's raw CSV (--page raw --csv): per launch, its kernel, time, instructions, tensor-pipe use,
    registers, local-memory bytes, DRAM bytes and issue stalls (cycles per issued instruction)."""
    found = []
    for launch in ncu_launches(path):
        found.append({"kernel": launch["Kernel Name"].split("(")[0],
                      **{key: ncu_number(launch, metric) for key, metric in METRICS.items()},
                      "stalls": ncu_stalls(launch)})
        found[-1]["us"] /= 1e3  # ncu's ns
    return found


if __name__ == "__main__":
    if "--metrics" in sys.argv:
        print(EXTRA_METRICS)
    elif "--to-json" in sys.argv:
        import subprocess
        steps = dict(zip(("plain", "a load per step", "list in registers"),
                         (launches(p) for p in sys.argv[sys.argv.index("--to-json") + 1:])))
        ncu = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout.split()
        json.dump(run_stamp(
            tool=f"Nsight Compute {ncu[ncu.index('Version') + 1] if 'Version' in ncu else ''}, "
                 "ncu's locked clocks (times longer than the benchmark's)",
            size="N=8192, H=4096, V=128256, C = V_C = 4096, the benchmark's inputs (every tile kept)",
            launches="the step's first 8 product launches: dW's and dx's of its first 4 slices",
            steps=steps), sys.stdout, indent=1)
    else:
        profile_step()
