"""The PLogGP model for the CLI: a ctypes binding to libpartita-model.so (the
same code libpartita runs), validation against measurements and the tuning search."""

from .native import (LOGGP_SCHEMA, TUNING_SCHEMA, ModelError, Params, Segment, Table, default_params_path,
                     fit_line, fmt_bytes, library)

__all__ = ["LOGGP_SCHEMA", "TUNING_SCHEMA", "ModelError", "Params", "Segment", "Table", "default_params_path",
           "fit_line", "fmt_bytes", "library"]
