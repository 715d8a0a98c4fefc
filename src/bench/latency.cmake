# partita-latency: the OSU Micro-Benchmarks compatible partitioned latency test (docs/latency.md).
partita_benchmark(partita-latency latency.c latency_output.c)
