"""What make bench BENCH=k8s (bench/k8s.py) times, as behaviour: the
operator with kwok's simulated nodes (a ZeroNFNode and host id each, its
NF pods placed by its slots, all freed when the nodes go), and an NF made
after the chain that names it getting that chain's packets."""
from __future__ import annotations

import sys

from kube import REPO, kget

sys.path.insert(0, str(REPO / "bench"))
import k8s as kbench  # noqa: E402
from zeronf.client import Client  # noqa: E402


def test_kwok_nodes_get_their_zeronfnodes_and_nf_pods(zeronf):
    # reconcile_once checks what it made (10 NF pods on each node) and
    # that it all goes: the ZeroNFNodes, the node agents' pods
    with kbench.namespace(), kbench.kwok():
        kbench.reconcile_once(12, 3)
        kbench.reconcile_once(12, 3)  # the freed host ids given again
    assert sorted(n["spec"]["hostId"] for n in kget("zeronfnodes")["items"]) \
        == [1, 2]


def test_an_nf_made_after_its_chain_gets_the_chain_s_packets(zeronf):
    with kbench.namespace():
        kbench.first_packet_setup()
        with Client(kbench.NODE) as c:
            assert not kbench.probe_nfs(c)
            kbench.first_packet_once(c)  # raises unless a packet came
            assert not kbench.probe_nfs(c)  # gone with its NetworkFunction
