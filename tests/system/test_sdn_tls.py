"""The OpenFlow endpoint over TLS (docs/sdn.md "Connections"): a CA and
certificates made with openssl's command line; Debian's ovs-ofctl with
TLS as the tool, Python's ssl as a controller that requires the switch's
certificate; what TLS must refuse, refused."""
from __future__ import annotations

import socket
import subprocess

import pytest

from harness import free_port

pytest.importorskip("os_ken.ofproto.ofproto_v1_3")
from test_sdn import (DP, OFCTL, Conn, never_reading, parser,  # noqa: E402
                      zeronf_sdn)


def make_pki(d) -> dict:
    """A CA, a switch's and a controller's key and certificate signed by
    it, and another CA's controller (what TLS must refuse): EC keys,
    openssl's command line."""
    def run(*a):
        subprocess.run(["openssl", *a], cwd=d, check=True,
                       capture_output=True, timeout=60)

    def ca(name):
        run("req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj",
            f"/CN={name}")

    def leaf(name, by):
        run("req", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", f"{by}.crt",
            "-CAkey", f"{by}.key", "-CAcreateserial", "-out",
            f"{name}.crt", "-days", "2")
    ca("ca")
    ca("other-ca")
    leaf("switch", "ca")
    leaf("controller", "ca")
    leaf("stranger", "other-ca")
    return {n: (str(d / f"{n}.key"), str(d / f"{n}.crt"))
            for n in ("switch", "controller", "stranger")} | \
        {"ca": str(d / "ca.crt")}


def test_tls_both_ways(managers, tmp_path):
    """TLS (ssl: targets): ovs-ofctl with a certificate of the switch's CA
    is served; one of another CA, and a peer speaking OpenFlow in clear,
    are refused; the switch dials a TLS controller and proves itself to
    it (the controller, Python's ssl, requires its certificate)."""
    import ssl
    pki = make_pki(tmp_path)
    m = managers(ports=["net_null0,no-rx=1"])
    port = free_port()
    tls = ["--private-key", pki["switch"][0], "--certificate",
           pki["switch"][1], "--ca-cert", pki["ca"]]
    zeronf_sdn(m, "--listen", f"ssl:127.0.0.1:{port}", *tls)

    def ofctl_tls(who, *args):
        return subprocess.run(
            [OFCTL, "-O", "OpenFlow13", "--private-key", pki[who][0],
             "--certificate", pki[who][1], "--ca-cert", pki["ca"], *args[:1],
             f"ssl:127.0.0.1:{port}", *args[1:]],
            capture_output=True, text=True, timeout=30)
    r = ofctl_tls("controller", "show")
    assert r.returncode == 0 and "n_tables:1" in r.stdout, r.stderr
    assert ofctl_tls("controller", "add-flow",
                     "priority=3,actions=drop").returncode == 0
    assert m.call("of.table")["active"] == 1
    r = ofctl_tls("stranger", "show")
    assert r.returncode != 0, r.stdout
    # OpenFlow in clear to a TLS port: no HELLO comes, it is closed
    c = Conn(port)
    c.s.sendall(bytes([4, 0, 0, 8, 0, 0, 0, 1]))
    c.s.settimeout(10)
    try:
        got = c.recv()
    except ConnectionResetError:  # closed with what it sent unread
        got = None
    assert got is None
    c.close()
    assert m.call("status")["ready"]
    # active: a TLS controller that requires the switch's certificate
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["controller"][1], pki["controller"][0])
    ctx.load_verify_locations(pki["ca"])
    ctx.verify_mode = ssl.CERT_REQUIRED
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    cport = ls.getsockname()[1]
    zeronf_sdn(m, "--controller", f"ssl:127.0.0.1:{cport}", *tls)
    ls.settimeout(20)
    raw, _ = ls.accept()
    s = ctx.wrap_socket(raw, server_side=True)
    assert s.getpeercert()["subject"] == ((("commonName", "switch"),),)
    c = Conn.__new__(Conn)
    c.s, c.buf = s, b""
    assert isinstance(c.recv(), parser.OFPHello)
    c.send(parser.OFPHello(DP))
    c.send(parser.OFPFeaturesRequest(DP))
    r = c.recv()
    assert isinstance(r, parser.OFPSwitchFeatures), r
    st = zeronf_sdn(m, "--status")
    assert st["controllers"][0]["state"] == "connected", st
    c.close()
    ls.close()


def test_tls_controller_that_does_not_read(managers, tmp_path):
    """Over TLS too, a connection that does not read its replies: the
    manager's queue for it stays bounded (it stops reading, TLS records
    included), and every request is answered once it reads."""
    import ssl
    pki = make_pki(tmp_path)
    m = managers(ports=["net_null0,no-rx=1"])
    port = free_port()
    zeronf_sdn(m, "--listen", f"ssl:127.0.0.1:{port}", "--private-key",
               pki["switch"][0], "--certificate", pki["switch"][1],
               "--ca-cert", pki["ca"])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.load_cert_chain(pki["controller"][1], pki["controller"][0])
    ctx.load_verify_locations(pki["ca"])
    c = Conn.__new__(Conn)
    c.s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
    c.buf = b""
    assert isinstance(c.recv(), parser.OFPHello)
    c.send(parser.OFPHello(DP))
    never_reading(m, c)
