"""Pure model: resources and dominant shares, scenarios, workload generators, fairness
metrics and exact offline oracles. No I/O beyond reading scenario files, no asyncio."""
