"""The REST API and the metrics (zeronf api) against a running instance
with traffic: the CLI's operations over HTTP with HTTP statuses for the
manager's errors, an OpenAPI description, a token always (made by the
server, or a file of the operator's), no CORS header unless an origin is
named (never '*'), and Prometheus metrics scraped by a real Prometheus
(Debian's, with the token) and linted by promtool. tests/security/
test_api_attacks.py attacks it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from harness import NF_BIN, free_port, wait_for


class Api:
    """zeronf api on a free port: on loopback, or on every address
    (any=True; the tests still connect through loopback). Without
    --token-file among @args the server makes its token: read from where
    it says (token_path)."""

    def __init__(self, instance: str, tmp: Path, *args: str,
                 any: bool = False):
        self.port = free_port()
        self.instance = instance
        self.url = f"http://127.0.0.1:{self.port}"
        listen = f"{'0.0.0.0' if any else '127.0.0.1'}:{self.port}"
        self.log = open(tmp / f"api{self.port}.log", "w")
        self.made_token = "--token-file" not in args
        self.token = None
        if not self.made_token:
            self.token = Path(args[args.index("--token-file") + 1]) \
                .read_text().strip()
        self.p = subprocess.Popen(
            [sys.executable, "-m", "zeronf", "-i", instance, "api",
             "--listen", listen, *args], stdout=self.log,
            stderr=subprocess.STDOUT)

    @property
    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"}

    def wait(self) -> "Api":
        from zeronf.api import token_path

        def up():
            assert self.p.poll() is None, Path(self.log.name).read_text()
            if self.token is None:
                f = token_path(self.instance, self.port)
                if not f.exists():
                    return False
                self.token = f.read_text().strip()
            try:
                return httpx.get(self.url + "/api/v1/status",
                                 headers=self.auth, timeout=2) \
                    .status_code == 200
            except httpx.TransportError:
                return False
        wait_for(up, 30, "api up")
        return self

    def client(self, **kw) -> httpx.Client:
        return httpx.Client(base_url=self.url + "/api/v1", timeout=10,
                            headers={**self.auth,
                                     "Content-Type": "application/json"},
                            **kw)

    def close(self) -> None:
        from zeronf.api import token_path
        self.p.terminate()
        assert self.p.wait(10) == 0, Path(self.log.name).read_text()
        self.log.close()
        # the token it made goes with it
        assert not token_path(self.instance, self.port).exists()


@pytest.fixture
def running(managers):
    m = managers(ports=["net_null0"], chain="1,port:0")
    m.start_nf("forward", 1)
    wait_for(lambda: m.call("port.list")["ports"][0]["tx"] > 1000, 20,
             "traffic")
    return m


def test_rest_operations(running, tmp_path):
    m = running
    api = Api(m.name, tmp_path).wait()
    try:
        c = api.client()
        assert c.get("/status").json()["instance"] == m.name
        assert c.get("/nfs").json()[0]["service"] == 1
        assert c.get("/ports").json()[0]["tx"] > 0
        r = c.post("/launched", json={"name": "f2", "service": 2,
                                      "binary": str(NF_BIN["forward"])})
        assert r.status_code == 201 and r.json()["replicas"] == 1
        assert c.post("/launched", json={
            "name": "f2", "service": 2,
            "binary": str(NF_BIN["forward"])}).status_code == 409
        assert c.post("/launched/f2/scale", json={"replicas": 2}) \
            .json()["replicas"] == 2
        wait_for(lambda: c.get("/launched").json()["launched"][0]
                 ["running"] == 2, 20, "2 replicas")
        r = c.put("/chain", json={"hops": ["svc:1", "svc:2", "port:0"]})
        assert r.status_code == 200 and r.json()["hops"][1] == "svc:2"
        assert r.json()["warnings"] == []
        # Issue 29, item 11: a service no NF serves is said, as the CLI
        # says it (the chain is set: its NFs may come later).
        r = c.put("/chain", json={"hops": ["svc:99", "port:0"]})
        assert r.status_code == 200 and r.json()["warnings"] == [
            "svc:99: no NF serves it now: its packets drop (no_instance) "
            "until one does"], r.json()
        r = c.put("/chain", json={"hops": ["svc:1", "svc:2", "port:0"]})
        r = c.put("/chain", json={"hops": ["svc:1", "port:99"]})
        assert r.status_code == 400
        assert r.json()["error"]["errno"] == "EINVAL"
        r = c.post("/rules", json={"match": {"proto": "udp"},
                                   "chain": ["svc:1", "port:0"],
                                   "priority": 3})
        assert r.status_code == 201
        rid = r.json()["id"]
        assert [x["id"] for x in c.get("/rules").json()] == [rid]
        assert c.delete(f"/rules/{rid}").status_code == 200
        assert c.delete(f"/rules/{rid}").status_code == 404
        assert c.delete("/launched/nope").status_code == 404
        assert c.delete("/launched/f2").status_code == 200
        # Issue 29, item 11: the documented error, not FastAPI's 422.
        r = c.post("/rx", json={"enabled": "maybe"})
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["code"] == -22 and err["errno"] == "EINVAL" and \
            err["message"].startswith("enabled: "), err
        ev = c.get("/events", params={"since": 0}).json()["events"]
        assert any(e["type"] == "nf.scale" for e in ev)
        spec = httpx.get(api.url + "/openapi.json").json()
        for path in ("/api/v1/launched/{name}/scale", "/api/v1/chain",
                     "/api/v1/rules/{rule_id}"):
            assert path in spec["paths"], path
        # No CORS header for an origin nobody named.
        r = c.get("/status", headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in r.headers
    finally:
        api.close()


def test_where_it_listens_and_a_port_in_use(running, tmp_path):
    """Issue 29, item 11: it says where it listens once it does; a port
    in use is the command's error (exit 1, one line), not uvicorn's."""
    m = running
    api = Api(m.name, tmp_path).wait()
    try:
        said = Path(api.log.name).read_text()
        assert f"listening on http://127.0.0.1:{api.port}/" in said, said
        r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name,
                            "api", "--listen", f"127.0.0.1:{api.port}"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert r.stderr == (f"zeronf: api: cannot listen on 127.0.0.1:"
                            f"{api.port}: Address already in use\n")
        assert r.stdout == ""
        from zeronf.api import token_path  # the first one's, untouched
        assert token_path(m.name, api.port).read_text().strip() == \
            api.token
    finally:
        api.close()


def test_token_file_and_named_origins(running, tmp_path):
    m = running
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "api",
                        "--cors-origin", "*"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "'*' is refused" in r.stderr
    from zeronf.api import token_path
    assert not token_path(m.name, 8080).exists()  # refused: none made
    tok = tmp_path / "token"
    tok.write_text("s3cret-token-0123456789\n")
    os.chmod(tok, 0o644)
    r = subprocess.run([sys.executable, "-m", "zeronf", "-i", m.name, "api",
                        "--token-file", str(tok)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "readable by others" in r.stderr
    os.chmod(tok, 0o600)
    auth = {"Authorization": "Bearer s3cret-token-0123456789"}
    api = Api(m.name, tmp_path, "--token-file", str(tok),
              "--cors-origin", "http://dash.example", any=True).wait()
    try:
        u = api.url + "/api/v1/status"
        assert httpx.get(u).status_code == 401
        assert httpx.get(u, headers={"Authorization": "Bearer x"}) \
            .status_code == 401
        assert httpx.get(api.url + "/metrics").status_code == 401
        r = httpx.get(u, headers={**auth, "Origin": "http://dash.example"})
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == \
            "http://dash.example"
        r = httpx.get(u, headers={**auth, "Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in r.headers
    finally:
        api.close()


@pytest.mark.skipif(shutil.which("prometheus") is None,
                    reason="no prometheus")
def test_prometheus_scrapes_the_metrics(running, tmp_path):
    m = running
    m.call("nf.start", name="fw2", binary=str(NF_BIN["forward"]),
           service=2)
    api = Api(m.name, tmp_path).wait()
    prom_port = free_port()
    cfg = tmp_path / "prometheus.yml"
    cred = tmp_path / "prom-token"
    cred.write_text(api.token)
    cred.chmod(0o600)
    cfg.write_text(f"""\
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
scrape_configs:
  - job_name: zeronf
    authorization: {{credentials_file: {cred}}}
    static_configs: [{{targets: ["127.0.0.1:{api.port}"]}}]
""")
    prom = subprocess.Popen(
        ["prometheus", f"--config.file={cfg}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=open(tmp_path / "prom.log", "w"), stderr=subprocess.STDOUT)
    try:
        text = httpx.get(api.url + "/metrics", headers=api.auth).text
        lint = subprocess.run(["promtool", "check", "metrics"], input=text,
                              capture_output=True, text=True, timeout=30)
        assert lint.returncode == 0, lint.stdout + lint.stderr

        def query(q: str) -> list:
            r = httpx.get(f"http://127.0.0.1:{prom_port}/api/v1/query",
                          params={"query": q}, timeout=5)
            return r.json()["data"]["result"]

        def scraped():
            try:
                return query('rate(zeronf_port_tx_packets_total[5s]) > 0')
            except (httpx.TransportError, KeyError, ValueError):
                return []  # ValueError: not ready ("Service Unavailable")
        wait_for(scraped, 60, "prometheus scraped a rate")
        up = query("zeronf_up")[0]  # issue 29, item 11: its own label
        assert up["value"][1] == "1"
        assert up["metric"]["zeronf_instance"] == api.instance
        assert up["metric"]["instance"] == f"127.0.0.1:{api.port}", up
        rx = {r["metric"]["name"]: float(r["value"][1])
              for r in query("zeronf_nf_rx_packets_total")}
        assert rx["forward1"] > 1000, rx
        assert "zeronf_nf_restarts_total" in text
        assert query('zeronf_nf_replicas{nf="fw2"}')[0]["value"][1] == "1"
        occ = query("zeronf_nf_rx_ring_occupancy")
        assert all(0 <= float(o["value"][1]) <= 1 for o in occ)
        assert query('zeronf_drops_total{reason="nf_exit"}')
    finally:
        prom.terminate()
        prom.wait(20)
        api.close()
