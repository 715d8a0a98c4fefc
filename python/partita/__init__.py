"""partita: benchmarks, a layered library, a model and reports for MPI-4 partitioned communication."""

__version__ = "0.1.0"
