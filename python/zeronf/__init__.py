"""ZeroNF control-plane client (the manager's JSON-RPC control socket)."""

from .client import Client, ZeroNFError, runtime_dir, socket_path

__all__ = ["Client", "ZeroNFError", "runtime_dir", "socket_path"]
__version__ = "0.1.0"
