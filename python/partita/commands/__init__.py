"""Sub-commands of the partita CLI. Each module defines register(subparsers)."""
