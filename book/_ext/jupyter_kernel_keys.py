"""A Sphinx extension that gives the build's Jupyter kernels CurveZMQ keys, so ipykernel stops
warning, once per page, that its kernel runs over TCP without encryption.

ipykernel 7 warns, once for each kernel it starts (so once per page), that the kernel "is running
over TCP without encryption": jupyter_client (8.10 and newer) gives a kernel CurveZMQ keys only when
its `KernelManager.transport_encryption` asks for them, and that is "disabled" unless configured.
myst-nb starts each page's kernel through nbclient with no way to configure its kernel manager, so
this local Sphinx extension (listed in _config.yml) makes "auto" the default in the build's own
process: keys for every kernel whose kernelspec declares Curve support, as ipykernel's does. The
kernels' own warnings (and the pages' output on stderr) are still shown.

Where pyzmq has no Curve support or jupyter_client has no such setting, it changes nothing.
"""
from __future__ import annotations


def setup(app):
    try:
        import zmq
        from jupyter_client.manager import KernelManager
    except ImportError:
        return {"parallel_read_safe": True, "parallel_write_safe": True}
    setting = KernelManager.class_traits().get("transport_encryption")
    if setting is not None and zmq.has("curve"):
        setting.default_value = "auto"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
