"""The dashboard on the cluster (the ZeroNF's spec.dashboard, docs/kubernetes.md
"Dashboard"): zeronf api in each node agent's pod on the node's address,
the Service zeronf-dashboard in front of them, the token from the Secret
the operator made; every guard of docs/operations.md in force."""
from __future__ import annotations

import base64
import json

from kube import apply, kget, kubectl, tools_pod, wait

NODES = {"znk-node1": "10.77.0.11", "znk-node2": "10.77.0.12"}


def curl_pod() -> None:
    apply(tools_pod("zcurl", ["/bin/sleep", "3600"]))
    wait(lambda: kget("pod", "zcurl").get("status", {}).get("phase")
         == "Running", 120, "the curl pod running")


def curl(url: str, *headers: str) -> tuple[int, str]:
    """(HTTP status, body) of a GET from the curl pod."""
    args = ["exec", "zcurl", "--", "curl", "-s", "-m", "10", "-w",
            "\n%{http_code}", url]
    for h in headers:
        args += ["-H", h]
    out = kubectl(*args).stdout
    body, _, code = out.rpartition("\n")
    return int(code), body


def test_each_node_s_dashboard_behind_the_service_with_the_token(zeronf):
    sec = kget("secret", "-n", "zeronf-system", "zeronf-dashboard")
    token = base64.b64decode(sec["data"]["token"]).decode()
    assert len(token) == 48
    svc = kget("service", "-n", "zeronf-system", "zeronf-dashboard")
    assert svc["spec"]["sessionAffinity"] == "ClientIP"
    ip = svc["spec"]["clusterIP"]
    wait(lambda: kget("daemonset", "-n", "zeronf-system", "zeronf-node")
         ["status"].get("numberReady") == 2, 120, "both dashboards ready")
    auth = f"Authorization: Bearer {token}"
    curl_pod()
    try:
        # the Service: one node's manager (a client kept on it)
        code, body = curl(f"http://{ip}:8080/api/v1/status", auth)
        assert code == 200, body
        first = json.loads(body)["instance"]
        assert first in NODES
        for _ in range(5):
            assert json.loads(curl(f"http://{ip}:8080/api/v1/status",
                                   auth)[1])["instance"] == first
        # each node's own, on its address
        for node, addr in NODES.items():
            code, body = curl(f"http://{addr}:8080/api/v1/status", auth)
            assert code == 200 and json.loads(body)["instance"] == node, body
        # the page needs no token; the API does; a name not the Service's
        # (a rebound DNS name) is refused before that
        code, body = curl(f"http://{ip}:8080/")
        assert code == 200 and "<html" in body.lower(), body[:200]
        assert curl(f"http://{ip}:8080/api/v1/status")[0] == 401
        assert curl(f"http://{ip}:8080/api/v1/status",
                    "Authorization: Bearer " + "x" * 48)[0] == 401
        assert curl(f"http://{ip}:8080/api/v1/status", auth,
                    "Host: evil.example")[0] == 400
        code, body = curl(f"http://{ip}:8080/api/v1/status", auth,
                          "Host: zeronf-dashboard.zeronf-system.svc:8080")
        assert code == 200, body
        # the token is the Secret's, made once
        assert kget("secret", "-n", "zeronf-system", "zeronf-dashboard")[
            "data"]["token"] == sec["data"]["token"]
    finally:
        kubectl("delete", "pod", "zcurl", "--wait=true", "--ignore-not-found")
